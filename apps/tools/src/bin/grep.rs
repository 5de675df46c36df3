//! grep: lines containing a fixed string (no regular expressions): `-v` the others, `-c` a count,
//! `-i` ignoring ASCII case. Status 0 if a line was selected, 1 if none, 2 on errors.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use oxok_libos::Args;
use oxok_tools::{Command, for_each_input, out};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let mut cmd = match Command::parse(&args, "grep", "vci", "[-vci] text [file...]") {
        Ok(c) => c,
        Err(code) => return code,
    };
    if cmd.operands.is_empty() {
        oxok_libos::eprintln!("usage: grep [-vci] text [file...]");
        return 2;
    }
    let pattern = cmd.operands.remove(0).as_bytes();
    let (invert, count, fold) = (cmd.has('v'), cmd.has('c'), cmd.has('i'));
    let many = cmd.operands.len() > 1;
    let mut selected = 0usize;
    let status = for_each_input(&cmd, |name, data| {
        let mut here = 0usize;
        for line in data.split_inclusive(|&b| b == b'\n') {
            if contains(line, pattern, fold) != invert {
                here += 1;
                if !count {
                    if many {
                        out(alloc::format!("{name}:").as_bytes());
                    }
                    out(line);
                    if !line.ends_with(b"\n") {
                        out(b"\n");
                    }
                }
            }
        }
        if count {
            let prefix = if many { alloc::format!("{name}:") } else { alloc::string::String::new() };
            out(alloc::format!("{prefix}{here}\n").as_bytes());
        }
        selected += here;
    });
    if status != 0 {
        2
    } else if selected > 0 {
        0
    } else {
        1
    }
}

/// Whether `line` contains `pattern` (ASCII case folded if `fold`).
fn contains(line: &[u8], pattern: &[u8], fold: bool) -> bool {
    if pattern.is_empty() {
        return true;
    }
    line.windows(pattern.len()).any(|w| if fold { w.eq_ignore_ascii_case(pattern) } else { w == pattern })
}
