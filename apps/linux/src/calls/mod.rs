//! The Linux system calls, one module per group; [`crate::table`] lists
//! them.

pub mod attr;
pub mod epoll;
pub mod exec;
pub mod file;
pub mod fork;
pub mod fs;
pub mod futex;
pub mod info;
pub mod itimer;
pub mod links;
pub mod memory;
pub mod net;
pub mod poll;
pub mod process;
pub mod select;
pub mod signal;
pub mod statfs;
pub mod time;
pub mod wait;
