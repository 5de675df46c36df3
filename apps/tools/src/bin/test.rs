//! test: evaluates a condition for `if`, `while` and `&&`; status 0 if it
//! holds, 1 if not, 2 for a malformed one. `! EXPR`; `-n S`, `-z S`, `S`;
//! `S = S`, `S != S`; `N -eq|-ne|-lt|-le|-gt|-ge N`; `-e F`, `-f F`, `-d F`
//! (files of the file server).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::{Args, eprintln, fs};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let words: Vec<&str> = args.iter().skip(1).collect();
    match eval(&words) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(why) => {
            eprintln!("test: {why}");
            2
        }
    }
}

fn eval(w: &[&str]) -> Result<bool, &'static str> {
    match w {
        [] => Ok(false),
        ["!", rest @ ..] => eval(rest).map(|b| !b),
        [s] => Ok(!s.is_empty()),
        ["-n", s] => Ok(!s.is_empty()),
        ["-z", s] => Ok(s.is_empty()),
        ["-e", f] => Ok(fs::stat(f).is_ok()),
        ["-f", f] => Ok(fs::stat(f).is_ok_and(|m| !m.is_dir())),
        ["-d", f] => Ok(fs::stat(f).is_ok_and(|m| m.is_dir())),
        [a, "=", b] => Ok(a == b),
        [a, "!=", b] => Ok(a != b),
        [a, op, b] => {
            let (a, b) = (number(a)?, number(b)?);
            match *op {
                "-eq" => Ok(a == b),
                "-ne" => Ok(a != b),
                "-lt" => Ok(a < b),
                "-le" => Ok(a <= b),
                "-gt" => Ok(a > b),
                "-ge" => Ok(a >= b),
                _ => Err("unknown operator"),
            }
        }
        _ => Err("too many arguments"),
    }
}

fn number(s: &str) -> Result<i64, &'static str> {
    s.parse().map_err(|_| "integer expected")
}
