//! init: the first program. Prints the banner, then starts the file server
//! and the shell, waits for the shell and stops the server (`init banner`
//! prints the banner only).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::{Args, println, sys};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let id = oxok_libos::process::env_id();
    let (total, free, size) = match sys::mem_info() {
        Ok([t, f, s]) => (t, f, s),
        Err(e) => {
            println!("init: mem_info failed: {e}");
            return 1;
        }
    };
    println!("Oxok {} — an exokernel for x86-64", oxok_libos::abi::VERSION);
    println!(
        "init: environment {id}, memory {} MiB usable ({} MiB free, {} frames of {} bytes)",
        (total * size) >> 20,
        (free * size) >> 20,
        total,
        size
    );
    // `init banner` stops here; plain `init` hands the console to the shell.
    if args.get(1) == Some("banner") {
        return 0;
    }
    // With a NIC, the machine's address (QEMU's user network) and every
    // port: what init and everything it starts may send (each may narrow it).
    if let Ok(mac) = oxok_libos::net::mac() {
        let t =
            oxok_libos::abi::net::TxTemplate { mac, pad: [0; 2], ip: [10, 0, 2, 15], port_lo: 0, port_hi: u16::MAX };
        if let Err(e) = oxok_libos::net::set_template(0, &t) {
            println!("init: no transmit template ({e})");
        }
    }
    // The file server first: the shell and everything it starts find it
    // as the `fsd` their ancestor init started (`fs::locate`).
    let fsd = oxok_libos::fs::spawn_server().map_err(|e| println!("init: no file server ({e})")).ok();
    // Wait until it answers (its first call waits for it to accept calls),
    // so the shell starts with a serving file server and the console shows
    // the server's line before the shell's.
    if fsd.is_some() {
        let _ = oxok_libos::fs::server_stats();
    }
    let code = match oxok_libos::exec::spawn("shell", &["shell"]) {
        Ok(shell) => match oxok_libos::exec::wait(shell) {
            Ok(status) => status.code(),
            Err(e) => {
                println!("init: waiting for the shell: {e}");
                1
            }
        },
        Err(e) => {
            println!("init: no shell ({e})");
            0
        }
    };
    // A sleeping server would keep the machine up: stop it (its frames go
    // with it) before init ends.
    if let Some(fsd) = fsd
        && let Err(e) = oxok_libos::fs::stop_server(fsd)
    {
        println!("init: stopping the file server: {e}");
    }
    code
}
