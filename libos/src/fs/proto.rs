//! The file server's wire protocol, defined in `oxok-fsproto` (a pure,
//! host-tested crate the server shares); this module adds the client's
//! reading of a reply status as an I/O error.

pub use oxok_fsproto::*;

use crate::fd::IoError;

const _: () = assert!(WORDS == crate::pct::WORDS);

/// The client's error for a failure status.
pub fn result(status: Status) -> Result<(), IoError> {
    use IoError as E;
    Err(match status {
        Status::Ok => return Ok(()),
        Status::NotFound => E::NotFound,
        Status::Exists => E::Exists,
        Status::NotDir => E::NotDir,
        Status::IsDir => E::IsDir,
        Status::NotEmpty => E::NotEmpty,
        Status::Invalid => E::Invalid,
        Status::NoSpace => E::NoSpace,
        Status::BadHandle => E::BadFd,
        Status::Unsupported => E::Unsupported,
        Status::Stopped => E::NoServer,
        Status::Denied => E::Kernel(crate::Error::Denied),
        Status::Loop => E::Loop,
        Status::TooLong => E::TooLong,
        Status::NotPermitted => E::NotPermitted,
    })
}
