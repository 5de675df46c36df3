//! [`FnCell`]: an atomic cell for an optional function pointer, for
//! handler tables an upcall or a transfer reads while the code it
//! interrupted may be setting them (a lock could deadlock there).

use crate::sys::Msg;
use crate::upcall::Outcome;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicPtr, Ordering};
use oxok_abi::ExceptionFrame;

mod sealed {
    pub trait Sealed {}
}

/// Function-pointer types a [`FnCell`] can hold: exactly the handler
/// types of the libOS.
///
/// # Safety
/// Implemented only for function-pointer types (non-null, the size of a
/// data pointer, round-tripping through `*mut ()` on x86-64).
pub unsafe trait FnPtr: Copy + sealed::Sealed {}

macro_rules! fn_ptr {
    ($($t:ty),* $(,)?) => {
        $(
            impl sealed::Sealed for $t {}
            // SAFETY: a function-pointer type (the trait's contract).
            unsafe impl FnPtr for $t {}
        )*
    };
}

fn_ptr!(fn(), fn(u64) -> bool, for<'a> fn(&'a mut ExceptionFrame) -> Outcome, for<'a> fn(u64, bool, &'a mut Msg),);

/// An optional `F`, read and written atomically.
#[repr(transparent)]
pub struct FnCell<F: FnPtr> {
    ptr: AtomicPtr<()>,
    _f: PhantomData<F>,
}

impl<F: FnPtr> FnCell<F> {
    const SIZE_OK: () = assert!(size_of::<F>() == size_of::<*mut ()>());

    /// An empty cell.
    pub const fn new() -> Self {
        let () = Self::SIZE_OK;
        FnCell { ptr: AtomicPtr::new(core::ptr::null_mut()), _f: PhantomData }
    }

    fn raw(f: F) -> *mut () {
        // SAFETY: `F` is a function pointer of a data pointer's size
        // (`FnPtr`, `SIZE_OK`); any such bits are a valid `*mut ()`.
        unsafe { core::mem::transmute_copy::<F, *mut ()>(&f) }
    }

    /// Holds `f` from now on.
    pub fn set(&self, f: F) {
        self.ptr.store(Self::raw(f), Ordering::Release);
    }

    /// Empties the cell.
    pub fn clear(&self) {
        self.ptr.store(core::ptr::null_mut(), Ordering::Release);
    }

    /// What the cell holds.
    pub fn get(&self) -> Option<F> {
        let p = self.ptr.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: the only non-null values ever stored are `F`s (`set`,
        // `fill`), which round-trip through `*mut ()` (`FnPtr`).
        Some(unsafe { core::mem::transmute_copy::<*mut (), F>(&p) })
    }

    /// Stores `f` if the cell is empty; true if the cell now holds `f`
    /// (stored now or before).
    pub fn fill(&self, f: F) -> bool {
        let p = Self::raw(f);
        match self.ptr.compare_exchange(core::ptr::null_mut(), p, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => true,
            Err(existing) => existing == p,
        }
    }
}

impl<F: FnPtr> Default for FnCell<F> {
    fn default() -> Self {
        Self::new()
    }
}
