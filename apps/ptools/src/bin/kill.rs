//! kill [-SIGNAL | -s SIGNAL] PID... — sends a signal (default `TERM`) to
//! each process; `kill -l` lists the signals.
//!
//! Signals travel by protected control transfer and each target accepts
//! them only from its ancestors (`oxok_libos::signal`). This tool is
//! usually a *sibling* of its target (both children of the shell), so when
//! the target refuses it, it asks its parent to send the signal in the
//! parent's name (`signal::kill_via_parent`), which works only if the parent
//! accepts forwarding — the shell's job control — and the target is the
//! parent's descendant. Exit status: 0 if every signal was delivered, 1
//! otherwise, 2 for a usage error.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::Error;
use oxok_libos::signal::{self, NSIG, SIGTERM};
use oxok_libos::{Args, eprintln, println};

oxok_libos::main!(main);

const USAGE: &str = "usage: kill [-SIGNAL | -s SIGNAL] PID... | kill -l";

fn main(args: Args) -> i32 {
    let mut sig = SIGTERM;
    let mut rest = args.iter().skip(1).peekable();
    match rest.peek().copied() {
        Some("-l") => {
            for n in 1..NSIG {
                if let Some(name) = signal::name(n) {
                    println!("{n:2} {name}");
                }
            }
            return 0;
        }
        Some("-s") => {
            rest.next();
            match rest.next().and_then(signal::from_name) {
                Some(s) => sig = s,
                None => return usage(),
            }
        }
        Some(opt) if opt.starts_with('-') && opt != "--" => {
            rest.next();
            match signal::from_name(&opt[1..]) {
                Some(s) => sig = s,
                None => {
                    eprintln!("kill: {opt}: no such signal");
                    return 2;
                }
            }
        }
        _ => {}
    }
    if rest.peek() == Some(&"--") {
        rest.next();
    }
    let mut status = 0;
    let mut any = false;
    for arg in rest {
        any = true;
        let Some(pid) = parse_pid(arg) else {
            eprintln!("kill: {arg}: not a process id");
            status = 1;
            continue;
        };
        let result = match signal::kill(pid, sig) {
            Err(Error::Denied) => signal::kill_via_parent(pid, sig).map_err(|_| Error::Denied),
            other => other,
        };
        if let Err(e) = result {
            let why = match e {
                Error::BadEnv => "no such process",
                Error::Denied => "permission denied (not an ancestor)",
                Error::Busy => "busy, try again",
                _ => e.text(),
            };
            eprintln!("kill: {pid}: {why}");
            status = 1;
        }
    }
    if any { status } else { usage() }
}

fn usage() -> i32 {
    eprintln!("{USAGE}");
    2
}

/// A process id in decimal or `0x` hexadecimal.
fn parse_pid(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
    .filter(|&p| p != 0)
}
