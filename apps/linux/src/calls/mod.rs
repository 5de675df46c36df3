//! The Linux system calls, one module per group; [`crate::table`] lists
//! them.

pub mod file;
pub mod fs;
pub mod info;
pub mod memory;
pub mod net;
pub mod poll;
pub mod process;
pub mod signal;
pub mod time;
