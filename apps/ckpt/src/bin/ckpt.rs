//! ckpt — the user-level checkpointer (see the `oxok_ckpt` crate).
//!
//! ```text
//! ckpt run PROG [ARGS]        start PROG and wait for it, uninterrupted
//!                             (the run a restored one is compared with)
//! ckpt move MS PROG [ARGS]    start PROG, after MS ms checkpoint its tree,
//!                             destroy it, restore it, wait for it
//! ckpt twice MS PROG [ARGS]   the same, restoring the one image twice:
//!                             two independent copies run on
//! ckpt send MS PROG [ARGS]    checkpoint, destroy, print the image on the
//!                             console (CKPT lines) for another machine
//! ckpt load NAME              restore the image stored as NAME in the
//!                             boot archive, wait for it
//! ckpt migrate MS PROG [ARGS] checkpoint, send the image on the second
//!                             serial line to another machine, destroy the
//!                             tree once the other side accepted it
//! ckpt receive                wait for an image on the second serial
//!                             line, restore it, wait for it
//! ```
//!
//! Open files go with the tree: on the same machine (`move`, `twice`) they
//! are re-opened by path; to another (`send`, `migrate`) their content
//! goes in the image and is re-created there if the path is free
//! (`oxok_ckpt::files`). When no file server runs above it, `ckpt` starts
//! one for the tree (and stops it at the end), as init does for the shell.
//!
//! Exit status: the restored root's (the first's, for `twice`); 1 when the
//! checkpoint or restore failed (with the reason on the console), 2 for a
//! usage error.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use oxok_ckpt::image::Image;
use oxok_ckpt::restore::{Restored, restore};
use oxok_ckpt::{save, transfer, wire};
use oxok_libos::exec::{self, Child};
use oxok_libos::{Args, eprintln, fs, println, time};

oxok_libos::main!(main);

const USAGE: &str =
    "usage: ckpt move|twice|send|migrate MS PROG [ARGS] | ckpt run PROG [ARGS] | ckpt load NAME | ckpt receive";

fn main(args: Args) -> i32 {
    let argv: Vec<&str> = args.iter().collect();
    // A file server for the tree, if none runs above this process.
    let server = if fs::locate::server().is_none() { fs::spawn_server().ok() } else { None };
    let code = command(&argv);
    if let Some(s) = server {
        let _ = fs::stop_server(s);
    }
    code
}

fn command(argv: &[&str]) -> i32 {
    match argv.get(1).copied() {
        Some("load") if argv.len() == 3 => load(argv[2]),
        Some("receive") if argv.len() == 2 => receive(),
        Some("run") if argv.len() >= 3 => match exec::spawn(argv[2], &argv[2..]).map(exec::wait) {
            Ok(Ok(st)) => st.code(),
            _ => {
                eprintln!("ckpt: {}: cannot run", argv[2]);
                1
            }
        },
        Some(cmd @ ("move" | "twice" | "send" | "migrate")) if argv.len() >= 4 => {
            let Ok(ms) = argv[2].parse::<u64>() else {
                eprintln!("{USAGE}");
                return 2;
            };
            run(cmd, ms, &argv[3..])
        }
        _ => {
            eprintln!("{USAGE}");
            2
        }
    }
}

fn run(cmd: &str, ms: u64, prog: &[&str]) -> i32 {
    let child = match exec::spawn(prog[0], prog) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ckpt: {}: {e}", prog[0]);
            return 1;
        }
    };
    let _ = time::sleep_ms(ms);
    let carry = matches!(cmd, "send" | "migrate");
    let (tree, img) = match save::checkpoint(child.slot, carry) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("ckpt: checkpoint failed: {e}");
            let _ = exec::wait(child);
            return 1;
        }
    };
    let bytes = img.encode();
    println!(
        "ckpt: saved {} processes, {} frames, {} open files, {} transfers in progress, {} bytes",
        img.envs.len(),
        img.frames.len(),
        img.files.len(),
        transfer::pairs(&img).map_or(0, |p| p.len()),
        bytes.len()
    );
    if cmd == "migrate" {
        return migrate(tree, &bytes);
    }
    tree.destroy();
    // The image is read back from its bytes, as a restore elsewhere would.
    let img = match Image::decode(&bytes) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("ckpt: {e}");
            return 1;
        }
    };
    match cmd {
        "send" => {
            wire::send(&bytes);
            0
        }
        "twice" => {
            let (Some(a), Some(b)) = (start(&img), start(&img)) else { return 1 };
            let code = finish(a);
            finish(b);
            code
        }
        _ => match start(&img) {
            Some(r) => finish(r),
            None => 1,
        },
    }
}

/// Sends the stopped tree's image to the other machine; destroys the tree
/// once the other side accepted it, else lets it run on here.
fn migrate(tree: save::Tree, bytes: &[u8]) -> i32 {
    match wire::send_line(bytes) {
        Ok(true) => {
            println!("ckpt: migrated {} processes", tree.members.len());
            tree.destroy();
            0
        }
        answer => {
            match answer {
                Ok(_) => eprintln!("ckpt: the other machine refused the image; the tree runs on here"),
                Err(e) => eprintln!("ckpt: migrate failed ({e:?}); the tree runs on here"),
            }
            tree.continue_all();
            let (slot, id) = (tree.members[0].slot, tree.members[0].id);
            let _ = exec::wait(Child { slot, id });
            1
        }
    }
}

fn load(name: &str) -> i32 {
    let Some(bytes) = exec::program(name) else {
        eprintln!("ckpt: no {name} in the boot archive");
        return 1;
    };
    let bytes = match wire::unpack(bytes) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("ckpt: {name}: {e}");
            return 1;
        }
    };
    match Image::decode(&bytes) {
        Ok(img) => match start(&img) {
            Some(r) => finish(r),
            None => 1,
        },
        Err(e) => {
            eprintln!("ckpt: {name}: refused: {e}");
            1
        }
    }
}

fn receive() -> i32 {
    let bytes = match wire::receive_line() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("ckpt: receive failed: {e}");
            return 1;
        }
    };
    println!("ckpt: received {} bytes", bytes.len());
    match Image::decode(&bytes) {
        Ok(img) => {
            wire::answer(true);
            match start(&img) {
                Some(r) => finish(r),
                None => 1,
            }
        }
        Err(e) => {
            wire::answer(false);
            eprintln!("ckpt: received image refused: {e}");
            1
        }
    }
}

fn start(img: &Image) -> Option<Restored> {
    match restore(img) {
        Ok(mut r) => {
            println!("ckpt: restored {} processes, {} open files", r.members.len(), img.files.len());
            r.notify_late();
            Some(r)
        }
        Err(e) => {
            eprintln!("ckpt: restore refused: {e}");
            None
        }
    }
}

/// Waits for the restored root; returns its exit code.
fn finish(r: Restored) -> i32 {
    let (slot, id) = r.members[0];
    let code = exec::wait(Child { slot, id }).map(|s| s.code()).unwrap_or(1);
    println!("ckpt: restored tree ended with {code}");
    code
}
