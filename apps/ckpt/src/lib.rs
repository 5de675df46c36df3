//! The user-level checkpointer (Fluke §4, OSDI'99: every thread's state
//! exportable, so ordinary programs can checkpoint and migrate others).
//!
//! `ckpt` is an ordinary program. It holds capabilities for the processes
//! it saves — it started them, so it holds their environment capabilities,
//! and it reaches their children through `cap_copy` — and nothing more: no
//! kernel privilege and no cooperation from the target. Saving
//! ([`save`]): stop the tree (`env_stop`) at a consistent cut, export each
//! environment's state (`env_get_state`), list its mappings
//! (`env_mappings`), read every frame once (`env_peek`) and describe its
//! capability list (`cap_peek`). The libOS state — descriptors, pipes and
//! their contents, signal handlers, the working directory, VM regions —
//! lives in the process's own memory, so it comes with the memory.
//! Restoring ([`restore`]) rebuilds the tree in fresh environments from the
//! [`image`]; the frames and ids are new, the virtual addresses and
//! capability slots are the same, and the libOS re-derives what it cached
//! (`oxok_libos::restore`).
#![no_std]
#![deny(unsafe_code)]

extern crate alloc;

pub mod files;
pub mod image;
pub mod restore;
pub mod save;
pub mod transfer;
pub mod wire;

use alloc::string::String;
use core::fmt;

/// Why a checkpoint or a restore failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CkptError {
    /// The image is malformed (see [`image::ImageError`]).
    Image(image::ImageError),
    /// A kernel call failed: which step, and the kernel's error.
    Call(&'static str, oxok_libos::Error),
    /// The tree never reached a consistent cut (a transfer in progress
    /// between its members each time it was stopped).
    Busy,
    /// Something the image would need that this checkpointer cannot give.
    Unsupported(&'static str),
    /// An open file that cannot be carried: why, and its path.
    File(&'static str, String),
}

impl fmt::Display for CkptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CkptError::Image(e) => write!(f, "bad image: {e}"),
            CkptError::Call(what, e) => write!(f, "{what}: {e:?}"),
            CkptError::Busy => write!(f, "no consistent cut (transfers in progress)"),
            CkptError::Unsupported(what) => write!(f, "unsupported: {what}"),
            CkptError::File(why, path) => write!(f, "open file {path}: {why}"),
        }
    }
}

impl From<image::ImageError> for CkptError {
    fn from(e: image::ImageError) -> CkptError {
        CkptError::Image(e)
    }
}

/// Attaches a step name to a kernel error.
pub(crate) trait Step<T> {
    fn at(self, what: &'static str) -> Result<T, CkptError>;
}

impl<T> Step<T> for Result<T, oxok_libos::Error> {
    fn at(self, what: &'static str) -> Result<T, CkptError> {
        self.map_err(|e| CkptError::Call(what, e))
    }
}
