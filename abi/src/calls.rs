//! The call table.
//!
//! Each entry is `index => name(args…) -> [results…];` with a doc comment that
//! says what the call **checks** and what it **changes**. `for_each_call!(m)`
//! expands `m!` with the whole table; the kernel's dispatch
//! (`kernel/src/syscall.rs`) and the libOS stubs (`libos/src/sys.rs`) are both
//! generated that way, and [`Call`](crate::Call) below is too.

/// Expands the macro `$m` with the complete call table.
///
/// The table's grammar, per entry:
/// `$(#[doc])* $index:literal => $name:ident($($arg:ident),*) -> [$($res:ident),*];`
#[macro_export]
macro_rules! for_each_call {
    ($m:path) => {
        $m! {
            /// Does nothing and returns. Used to measure the bare cost of
            /// entering and leaving the kernel.
            ///
            /// Checks: nothing. Changes: nothing.
            0 => null() -> [];

            /// Writes `len` bytes starting at user address `ptr` to the kernel
            /// console (the serial port), unmodified.
            ///
            /// Checks: every byte of `[ptr, ptr+len)` lies below
            /// [`layout::USER_TOP`](crate::layout::USER_TOP) and is mapped
            /// user-readable in the caller's page table
            /// ([`Error::BadAddress`](crate::Error::BadAddress) otherwise);
            /// `len` ≤ [`CONSOLE_WRITE_MAX`](crate::CONSOLE_WRITE_MAX)
            /// ([`Error::Invalid`](crate::Error::Invalid)).
            /// Changes: nothing but the console. Returns the bytes written.
            1 => console_write(ptr, len) -> [written];

            /// Ends the calling environment with exit status `code`. The
            /// kernel logs the status, releases everything the environment
            /// owns and runs the next runnable environment; the call never
            /// returns.
            ///
            /// Checks: nothing. Changes: destroys the caller.
            2 => env_exit(code) -> [];

            /// Returns the caller's environment id.
            ///
            /// Checks: nothing. Changes: nothing.
            3 => env_self() -> [id];

            /// Returns the machine's physical memory: `total` usable frames
            /// found in the boot memory map, `free` frames not owned by anyone,
            /// and `frame_size` in bytes.
            ///
            /// Checks: nothing. Changes: nothing.
            4 => mem_info() -> [total, free, frame_size];
        }
    };
}

/// Maximum bytes one `console_write` accepts.
pub const CONSOLE_WRITE_MAX: u64 = 64 * 1024;

macro_rules! define_call_enum {
    ($($(#[doc = $doc:literal])* $idx:literal => $name:ident($($arg:ident),*) -> [$($res:ident),*];)*) => {
        /// Every Oxok call, by name. `Call::X as u64 + CALL_BASE` is its
        /// number.
        #[allow(non_camel_case_types, missing_docs)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u64)]
        pub enum Call {
            $($name = $idx,)*
        }

        impl Call {
            /// All calls, in table order.
            pub const ALL: &'static [Call] = &[$(Call::$name,)*];

            /// The call with this number (`CALL_BASE + index`), if any.
            pub fn from_number(nr: u64) -> Option<Call> {
                match nr.wrapping_sub($crate::CALL_BASE) {
                    $($idx => Some(Call::$name),)*
                    _ => None,
                }
            }

            /// The number user space puts in `rax`.
            pub const fn number(self) -> u64 {
                $crate::CALL_BASE + self as u64
            }

            /// The call's name as written in the table.
            pub const fn name(self) -> &'static str {
                match self { $(Call::$name => stringify!($name),)* }
            }

            /// How many argument registers the call reads.
            pub const fn args(self) -> usize {
                match self { $(Call::$name => $crate::__count!($($arg)*),)* }
            }

            /// How many result registers the call fills.
            pub const fn results(self) -> usize {
                match self { $(Call::$name => $crate::__count!($($res)*),)* }
            }
        }
    };
}

for_each_call!(define_call_enum);
