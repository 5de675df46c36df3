//! init: the first program. Prints the banner, then starts the file server
//! (and, with a disk, the disk file server `dfsd`) and the shell, waits for the shell and stops the server (`init banner`
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
    // With a disk, the disk file server (C-FFS over XN): `/` is on the
    // disk from here on, `/tmp` stays in the RAM server.
    let dfsd = if oxok_libos::xn::header().is_some() {
        let d = oxok_libos::fs::spawn_disk_server().map_err(|e| println!("init: no disk file server ({e})")).ok();
        if d.is_some() {
            wait_for_disk();
        }
        d
    } else {
        None
    };
    // Beside it, the daemon that has it write back what waited 5 s.
    let update = match dfsd {
        Some(_) => {
            oxok_libos::exec::spawn(UPDATE, &[UPDATE]).map_err(|e| println!("init: no update daemon ({e})")).ok()
        }
        None => None,
    };
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
    // with it) before init ends; the disk's first, which writes back what
    // it still holds, after the daemon that asks it to.
    if let Some(u) = update
        && let Err(e) = oxok_libos::signal::destroy(u)
    {
        println!("init: stopping the update daemon: {e}");
    }
    if let Some(d) = dfsd
        && let Err(e) = oxok_libos::fs::stop_server(d)
    {
        println!("init: stopping the disk file server: {e}");
    }
    if let Some(fsd) = fsd
        && let Err(e) = oxok_libos::fs::stop_server(fsd)
    {
        println!("init: stopping the file server: {e}");
    }
    code
}

/// The disk's write-back daemon (`apps/fsd/src/update.rs`).
const UPDATE: &str = "update";

/// Tries while the disk file server mounts (or makes) its file system, at
/// 20 ms each: 60 s.
const DISK_TRIES: u32 = 3_000;

/// Waits until the disk file server answers (mounting replays XN's
/// recovery and C-FFS's repairs; a fresh disk is formatted first), then
/// makes the RAM server's `/tmp`, where the disk's `/tmp` leads.
fn wait_for_disk() {
    use oxok_libos::fd::IoError;
    for _ in 0..DISK_TRIES {
        match oxok_libos::fs::stat("/") {
            Ok(_) => break,
            Err(IoError::NoServer) if oxok_libos::fs::locate::disk_server().is_some() => {
                let _ = oxok_libos::time::sleep_ms(20);
            }
            Err(e) => {
                println!("init: the disk file system does not answer ({e})");
                break;
            }
        }
    }
    match oxok_libos::fs::mkdir(oxok_libos::fs::TMP) {
        Ok(()) | Err(IoError::Exists) => {}
        Err(e) => println!("init: no {} ({e})", oxok_libos::fs::TMP),
    }
}
