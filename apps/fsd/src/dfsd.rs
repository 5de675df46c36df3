//! dfsd: the disk file server. The C-FFS library file system
//! (`crates/cffs`) runs here over the kernel's XN calls
//! (`oxok_libos::xn::XnDisk`): its templates registered with XN once (the
//! kernel catalogues them on the disk), every metadata change checked by
//! XN against them, file data read and written through the buffer-cache
//! pages this environment bound. Clients reach it exactly as they reach the
//! RAM server `fsd` (same protocol, same shared buffer pages); the libOS
//! routes every path but `/tmp` here when init started one
//! (`oxok_libos::fs::locate`).
//!
//! At the first request (init makes one at once): the file system whose
//! superblock is a catalogued root is mounted (XN recovered its free map
//! at boot; mount repairs link counts and orphans), else the templates are
//! registered and a fresh one is made. The owner is this environment's
//! principal, `DISK_PRINCIPAL`, a capability on `/8/1` init grants it
//! before it runs (`oxok_libos::principal`): the disk answers to the
//! `dfsd` of any boot, whatever its environment id.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

mod ahead;
mod behind;
mod buffers;
mod disk;
mod files;
mod generation;
mod io;
mod run;
mod server;
mod table;

use alloc::boxed::Box;
use oxok_libos::xn;
use oxok_libos::{Args, println};

oxok_libos::main!(main);

/// Bytes of the stack requests are served on.
const HANDLER_STACK: usize = 512 * 1024;

fn main(_args: Args) -> i32 {
    if xn::header().is_none() {
        println!("dfsd: no disk");
        return 1;
    }
    // C-FFS keeps whole blocks on the stack: requests (the first one
    // mounts) run on a stack of their own, larger than the PCT entry's
    // built-in one.
    oxok_libos::pct::set_stack(alloc::vec![0u8; HANDLER_STACK].leak());
    run::run("dfsd", "C-FFS over XN", Box::new(disk::DiskFiles::new()))
}
