//! shell: the first Oxok shell. Reads lines from the console, runs
//! programs from the boot archive with arguments (`spawn` + `wait` in the
//! libOS), keeps the last exit status in `$?`, and has built-in views of the
//! machine read from the kernel's exposed tables (`ps`, `frames`, `mem`,
//! `clock`, `caps`). `help` lists everything.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

mod line;
mod tables;

use alloc::string::String;
use alloc::vec::Vec;
use oxok_libos::exec::{self, ExitStatus, SpawnError};
use oxok_libos::{Args, print, println};

oxok_libos::main!(main);

fn main(_args: Args) -> i32 {
    println!("Oxok shell — `help` lists the commands.");
    let mut status = 0;
    let mut editor = line::Editor::new();
    loop {
        print!("oxok$ ");
        let Some(text) = editor.read_line() else {
            println!();
            return status;
        };
        let words: Vec<String> = text
            .split_whitespace()
            .map(|w| if w == "$?" { alloc::format!("{status}") } else { String::from(w) })
            .collect();
        let Some(cmd) = words.first() else { continue };
        let argv: Vec<&str> = words.iter().map(String::as_str).collect();
        status = match cmd.as_str() {
            "exit" => return argv.get(1).and_then(|s| s.parse().ok()).unwrap_or(status),
            "help" => help(),
            "echo" => {
                println!("{}", argv[1..].join(" "));
                0
            }
            "ps" | "envs" => builtin(tables::ps),
            "frames" => builtin(tables::frames),
            "mem" => builtin(tables::mem),
            "clock" => builtin(tables::clock),
            "caps" => builtin(tables::caps),
            "programs" => programs(),
            _ => run(&argv),
        };
    }
}

fn builtin(f: fn()) -> i32 {
    f();
    0
}

fn help() -> i32 {
    println!("built-in commands:");
    println!("  ps, envs     the environment table (exposed by the kernel, read without a system call)");
    println!("  frames       the frame table, summarised by owner");
    println!("  mem          usable and free memory");
    println!("  clock        the clock page");
    println!("  caps         this shell's capability list");
    println!("  programs     the programs in the boot archive");
    println!("  echo WORDS   print WORDS ($? is the last exit status)");
    println!("  exit [CODE]  leave the shell");
    println!("anything else runs a program from the boot archive: NAME ARGS…");
    0
}

fn programs() -> i32 {
    let Some(archive) = oxok_libos::exposed::boot_archive() else {
        println!("programs: no boot archive");
        return 1;
    };
    for entry in oxok_archive::Archive::new(archive).entries().flatten() {
        println!("  {:<24} {:>8} bytes", entry.name, entry.data.len());
    }
    0
}

fn run(argv: &[&str]) -> i32 {
    let child = match exec::spawn(argv[0], argv) {
        Ok(child) => child,
        Err(SpawnError::NotFound) => {
            println!("{}: not found (`programs` lists what there is)", argv[0]);
            return 127;
        }
        Err(e) => {
            println!("{}: {e}", argv[0]);
            return 126;
        }
    };
    match exec::wait(child) {
        Ok(ExitStatus::Exited(code)) => code,
        Ok(ExitStatus::Killed(v)) => {
            match v {
                Some(v) => println!("{}: killed by the kernel (CPU exception {v})", argv[0]),
                None => println!("{}: killed", argv[0]),
            }
            ExitStatus::Killed(v).code()
        }
        Err(e) => {
            println!("{}: wait: {e}", argv[0]);
            1
        }
    }
}
