//! Stable numeric error codes. A code, once given, never changes meaning.

use core::fmt;

macro_rules! errors {
    ($($(#[doc = $doc:literal])* $name:ident = $code:literal, $text:literal;)*) => {
        /// Why a call failed. Returned in `rax`; 0 means success and is not
        /// an `Error`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u64)]
        pub enum Error {
            $($(#[doc = $doc])* $name = $code,)*
        }

        impl Error {
            /// The error with this code, if the code is one.
            pub const fn from_code(code: u64) -> Option<Error> {
                match code {
                    $($code => Some(Error::$name),)*
                    _ => None,
                }
            }

            /// The stable numeric code.
            pub const fn code(self) -> u64 {
                self as u64
            }

            /// Its name as written in the contract (`BadCap`).
            pub const fn name(self) -> &'static str {
                match self { $(Error::$name => stringify!($name),)* }
            }

            /// A short English description.
            pub const fn text(self) -> &'static str {
                match self { $(Error::$name => $text,)* }
            }

            /// Every error, in code order.
            pub const ALL: &'static [Error] = &[$(Error::$name,)*];
        }
    };
}

errors! {
    /// The call number is in the Oxok range but names no call.
    BadCall = 1, "no such call";
    /// A pointer or address range is not mapped as the call needs, or
    /// reaches into kernel space.
    BadAddress = 2, "bad address";
    /// No free memory (frames or kernel objects) is left for the request.
    NoMemory = 3, "out of memory";
    /// The capability does not carry the right the call needs.
    Denied = 4, "permission denied";
    /// A capability slot is empty, out of range, or names another resource.
    BadCap = 5, "bad capability";
    /// No environment has this id.
    BadEnv = 6, "no such environment";
    /// An argument is out of its documented range.
    Invalid = 7, "invalid argument";
    /// The resource is in use (mapped, owned, referenced) and cannot change.
    Busy = 8, "resource busy";
    /// The named thing does not exist.
    NotFound = 9, "not found";
    /// The named thing already exists.
    Exists = 10, "already exists";
    /// The call would have to wait; try again later.
    WouldBlock = 11, "would block";
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (error {})", self.text(), self.code())
    }
}
