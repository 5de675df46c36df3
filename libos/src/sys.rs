//! System-call stubs, one function per call in `oxok_abi`'s table, generated
//! from it: `sys::console_write(ptr, len)` returns `Result<[u64; 1], Error>`
//! with as many results as the table declares.

use core::arch::asm;
use oxok_abi::{Call, Error};

/// Raw results of one `syscall`: status, then `rdi rsi rdx`.
pub struct Raw {
    /// `rax` on return: 0 or an error code.
    pub status: u64,
    /// `rdi rsi rdx` on return.
    pub values: [u64; 3],
}

/// Executes `syscall` with number `nr` and six argument registers.
#[inline(always)]
pub fn raw(nr: u64, a: [u64; 6]) -> Raw {
    let (status, r0, r1, r2);
    // SAFETY: `syscall` transfers to the kernel, which reads only registers
    // and memory it checks itself; it clobbers rcx and r11, may rewrite the
    // argument registers (restartable calls), and preserves everything else.
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") nr => status,
            inlateout("rdi") a[0] => r0,
            inlateout("rsi") a[1] => r1,
            inlateout("rdx") a[2] => r2,
            inlateout("r10") a[3] => _,
            inlateout("r8") a[4] => _,
            inlateout("r9") a[5] => _,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    Raw { status, values: [r0, r1, r2] }
}

/// Turns a raw status into a `Result`; unknown codes read as `Invalid`.
#[inline(always)]
pub(crate) fn check(status: u64) -> Result<(), Error> {
    match status {
        0 => Ok(()),
        code => Err(Error::from_code(code).unwrap_or(Error::Invalid)),
    }
}

macro_rules! generate_stubs {
    ($($(#[doc = $doc:literal])* $idx:literal => $name:ident($($arg:ident: $class:ident),*) -> [$($res:ident),*];)*) => {
        $(
            $(#[doc = $doc])*
            #[inline(always)]
            pub fn $name($($arg: u64),*) -> Result<[u64; oxok_abi::__count!($($res)*)], Error> {
                #[allow(unused_mut)]
                let mut regs = [0u64; 6];
                let mut _next = 0usize;
                $(regs[_next] = $arg; _next += 1;)*
                let r = raw(Call::$name.number(), regs);
                check(r.status)?;
                let mut out = [0u64; oxok_abi::__count!($($res)*)];
                let n = out.len();
                out.copy_from_slice(&r.values[..n]);
                Ok(out)
            }
        )*
    };
}

oxok_abi::for_each_call!(generate_stubs);
