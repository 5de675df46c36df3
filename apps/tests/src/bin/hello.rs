//! hello: a well-behaved environment. Scenarios run it after a hostile one to
//! show the kernel and other environments keep going.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::{Args, println};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let id = oxok_libos::process::env_id();
    print_args(id, args);
    println!("hello: ok");
    0
}

fn print_args(id: u64, args: Args) {
    oxok_libos::print!("hello: environment {id} running, argv =");
    for a in args.iter() {
        oxok_libos::print!(" {a}");
    }
    println!();
}
