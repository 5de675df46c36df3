//! sleep: waits the given number of seconds (decimals allowed: `sleep 0.5`;
//! several operands add up), asleep on a wakeup predicate over the clock
//! page — no CPU is used meanwhile. `^C` from the shell ends it.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::{Args, eprintln};
use oxok_tools::Command;

oxok_libos::main!(main);

/// Longest sleep accepted, in seconds (a day).
const MAX_SECONDS: u64 = 86_400;

fn main(args: Args) -> i32 {
    let cmd = match Command::parse(&args, "sleep", "", "seconds...") {
        Ok(c) => c,
        Err(code) => return code,
    };
    if cmd.operands.is_empty() {
        eprintln!("sleep: missing operand");
        eprintln!("usage: sleep seconds...");
        return 2;
    }
    let mut ms: u64 = 0;
    for &op in &cmd.operands {
        match millis(op) {
            Some(m) => ms = ms.saturating_add(m),
            None => {
                eprintln!("sleep: invalid time interval '{op}' (seconds, e.g. 2 or 0.5)");
                return 2;
            }
        }
    }
    if ms > MAX_SECONDS * 1000 {
        eprintln!("sleep: at most {MAX_SECONDS} seconds");
        return 2;
    }
    match oxok_libos::time::sleep_ms(ms) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("sleep: {e}");
            1
        }
    }
}

/// `2`, `0.5`, `1.250` → milliseconds; `None` if not a plain decimal.
fn millis(text: &str) -> Option<u64> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(whole) || !all_digits(frac) {
        return None;
    }
    let whole: u64 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
    let mut ms = whole.checked_mul(1000)?;
    let mut scale = 100;
    for b in frac.bytes().take(3) {
        ms += u64::from(b - b'0') * scale;
        scale /= 10;
    }
    Some(ms)
}
