//! update: the disk's write-back daemon, after Unix's `update`, which
//! called `sync` every 30 seconds. The disk file server `dfsd` keeps
//! changes in the buffer cache until someone asks for them to be durable;
//! each second this asks it (`WRITE_BACK`, `oxok_libos::fs::write_back`)
//! to write back everything once the oldest change has waited 5 seconds,
//! so nothing stays unwritten for long and nothing is written at once.
//! init starts it beside `dfsd` and ends it before stopping `dfsd`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::fd::IoError;
use oxok_libos::fs::{self, proto};
use oxok_libos::{Args, println, time};

oxok_libos::main!(main);

fn main(_args: Args) -> i32 {
    loop {
        if let Err(e) = time::sleep_ms(proto::WRITE_BACK_EVERY_MS) {
            println!("update: cannot sleep ({e}); stopping");
            return 1;
        }
        match fs::write_back(proto::WRITE_BACK_AGE_MS) {
            Ok(_) => {}
            // The server has gone (init is stopping it): nothing left to do.
            Err(IoError::NoServer) => return 0,
            Err(e) => println!("update: write-back failed: {e}"),
        }
    }
}
