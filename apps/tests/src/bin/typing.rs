//! typing: reads what is typed on the console (the scenario feeds QEMU's
//! stdin) with the libOS's blocking read — asleep on a wakeup predicate
//! between bytes — and echoes each line back, until a line `quit`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::{Args, console, println};

oxok_libos::main!(main);

fn main(_args: Args) -> i32 {
    println!("typing: ready");
    let mut line = [0u8; 128];
    let mut len = 0;
    let mut lines = 0;
    loop {
        let mut buf = [0u8; 64];
        let n = match console::read(&mut buf) {
            Ok(n) => n,
            Err(e) => {
                println!("typing: FAIL read: {e}");
                return 1;
            }
        };
        for &b in &buf[..n] {
            if b == b'\r' || b == b'\n' {
                let text = core::str::from_utf8(&line[..len]).unwrap_or("?");
                if text == "quit" {
                    println!("typing: ok ({lines} lines)");
                    return 0;
                }
                if len > 0 {
                    println!("typing: line {:?}", text);
                    lines += 1;
                }
                len = 0;
            } else if len < line.len() {
                line[len] = b;
                len += 1;
            }
        }
    }
}
