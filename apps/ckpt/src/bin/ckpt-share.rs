//! ckpt-share K MS FILE DIR — the checkpointer's test of shared positions
//! and directory cursors. It fills DIR with six files `a`…`f`, opens FILE
//! (read, write, truncated) and DIR, and spawns a child that inherits FILE
//! as descriptor 3: one open-file record of the server, one position.
//! Parent and child each write K lines (`p1`…, `c1`…) through it, MS ms
//! apart, the child half a period later; the parent also reads one entry
//! of DIR in each of its first three rounds. Then the parent reads DIR's
//! other entries, waits for the child and reads FILE through a new open:
//! with one shared position no line overwrites another, so it holds 2K
//! lines, K of each. The output is the same however the tree is
//! checkpointed and restored in between (the record comes back shared, the
//! cursor where it was).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use oxok_libos::exec::{self, SpawnOptions};
use oxok_libos::fd::{self, File, Handle};
use oxok_libos::fs::{self, OpenFlags};
use oxok_libos::{Args, println, time};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let number = |i: usize, default: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    if args.get(1) == Some("child") {
        return child(number(2, 6), number(3, 30));
    }
    let (Some(path), Some(dir)) = (args.get(3), args.get(4)) else {
        println!("usage: ckpt-share K MS FILE DIR");
        return 2;
    };
    let (k, ms) = (number(1, 6), number(2, 30));
    let _ = fs::mkdir(dir);
    for name in ["a", "b", "c", "d", "e", "f"] {
        if fs::write_file(&format!("{dir}/{name}"), name.as_bytes()).is_err() {
            println!("share: cannot write {dir}/{name}");
            return 1;
        }
    }
    let flags = OpenFlags::READ | OpenFlags::WRITE | OpenFlags::CREATE | OpenFlags::TRUNCATE;
    let (file, listing) = match (fs::open_file(path, flags), fs::open_file(dir, OpenFlags::READ | OpenFlags::DIRECTORY))
    {
        (Ok(f), Ok(d)) => (Arc::new(f), d),
        _ => {
            println!("share: cannot open {path} or {dir}");
            return 1;
        }
    };
    let mut opts = SpawnOptions::new();
    let shared: Arc<dyn File> = file.clone();
    opts.fd(3, Handle::from(shared));
    let (ks, mss) = (format!("{k}"), format!("{ms}"));
    let child = match exec::spawn_with("ckpt-share", &["ckpt-share", "child", &ks, &mss], &opts) {
        Ok(c) => c,
        Err(e) => {
            println!("share: spawn: {e}");
            return 1;
        }
    };
    drop(opts);
    let mut names = String::new();
    for i in 1..=k {
        if file.write(format!("p{i}\n").as_bytes()).is_err() {
            println!("share: parent write failed at {i}");
            return 1;
        }
        if i <= 3
            && let Ok(Some(e)) = listing.next_entry()
        {
            names.push_str(&e.name);
        }
        let _ = time::sleep_ms(ms);
    }
    while let Ok(Some(e)) = listing.next_entry() {
        names.push_str(&e.name);
    }
    println!("share: dir {names}");
    let status = exec::wait(child).map(|s| s.code()).unwrap_or(-1);
    drop(file);
    let text = fs::read_file(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines = text.lines().count();
    let p = text.lines().filter(|l| l.starts_with('p')).count();
    let c = text.lines().filter(|l| l.starts_with('c')).count();
    println!("share: file lines {lines} parent {p} child {c} bytes {} child status {status}", text.len());
    0
}

/// Writes K lines into descriptor 3, MS ms apart, half a period late.
fn child(k: u64, ms: u64) -> i32 {
    let _ = time::sleep_ms(ms / 2);
    for i in 1..=k {
        if fd::write(3, format!("c{i}\n").as_bytes()).is_err() {
            println!("share: child write failed at {i}");
            return 1;
        }
        let _ = time::sleep_ms(ms);
    }
    0
}
