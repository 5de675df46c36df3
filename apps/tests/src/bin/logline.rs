//! logline: kernel lines never cut a program's console line. It writes
//! `logline: before ` without a newline, starts `true` (which prints nothing) and waits for it
//! (the kernel logs the child's start and exit meanwhile), then ends the
//! line with `after`: the console must show `logline: before after` whole,
//! the kernel's lines after it. Then `logline: open ` is left open for
//! three seconds around another child: its lines wait at most the kernel's
//! hold time (2 s) and then come out on lines of their own.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::{Args, exec, print, println, time};

oxok_libos::main!(main);

fn child() -> bool {
    match exec::spawn("true", &["true"]) {
        Ok(c) => exec::wait(c).is_ok(),
        Err(_) => false,
    }
}

fn main(_args: Args) -> i32 {
    print!("logline: before ");
    let first = child();
    println!("after");
    print!("logline: open ");
    let second = child();
    let slept = time::sleep_ms(3000).is_ok();
    println!("late");
    if first && second && slept {
        println!("logline: ok");
        0
    } else {
        println!("logline: FAIL a child or the sleep failed");
        1
    }
}
