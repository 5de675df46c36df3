//! pred-sleep MODE: wakeup predicates (the test program; `sleep` is the tool).
//!
//! * `clock`: sleep until the clock page's tick count passes a parameter;
//!   then move the deadline with `pred_param` (no reinstall) and sleep again.
//!   Also the hostile cases: predicates naming kernel or unmapped memory,
//!   bad bytecode, bad masks.
//! * `watch`: sleep until another environment's row in the exposed
//!   environment table empties (it exited): the watched word changed.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::layout::{CLOCK, ENV_TABLE, ENV_TABLE_ROWS};
use oxok_libos::abi::{Error, pred::MAX_BYTES};
use oxok_libos::time::ticks;
use oxok_libos::{Args, exposed, println, sys};
use oxok_pred::Builder;
use oxok_tests::Checks;

oxok_libos::main!(main);

/// Offset of `ticks` in the clock page.
const TICKS: u64 = CLOCK + 16;

/// A word that stays 0 (a predicate waits for it to be 1).
static NEVER: u64 = 0;

fn install(index: u64, b: &Builder) -> Result<(), Error> {
    let code = b.build().map_err(|_| Error::Invalid)?;
    let bytes = code.as_bytes();
    sys::pred_install(0, index, bytes.as_ptr() as u64, bytes.len() as u64).map(|_| ())
}

fn main(args: Args) -> i32 {
    match args.get(1) {
        Some("watch") => watch(),
        _ => clock(),
    }
}

fn clock() -> i32 {
    let mut t = Checks::new("sleep");
    let mut b = Builder::new();
    b.load_u64(TICKS).ge_param(0);
    t.check(install(0, &b).is_ok(), "install clock predicate");
    let target = ticks() + 50;
    t.check(sys::pred_param(0, 0, 0, target).is_ok(), "set deadline parameter");
    let r = sys::env_sleep(1);
    let now = ticks();
    t.check(r == Ok([0]), "woke on predicate 0");
    t.check(now >= target, "not before the deadline");
    println!("sleep: woke at tick {now} (deadline {target})");
    // Move the deadline without reinstalling.
    let target2 = now + 30;
    t.check(sys::pred_param(0, 0, 0, target2).is_ok(), "parameter changed in place");
    t.check(sys::env_sleep(1) == Ok([0]) && ticks() >= target2, "new deadline honoured without reinstalling");
    println!("sleep: woke again at tick {} (deadline {target2})", ticks());

    // Two predicates, the second the one that comes true: the wake that
    // completes the sleep names it (a word of this program that stays 0
    // is watched beside a deadline).
    let mut never = Builder::new();
    never.load_u64(core::ptr::addr_of!(NEVER) as u64).eq_imm(1);
    t.check(install(2, &never).is_ok(), "install a predicate that never holds");
    let mut deadline = Builder::new();
    deadline.load_u64(TICKS).ge_param(0);
    t.check(install(3, &deadline).is_ok(), "install a second deadline");
    let target3 = ticks() + 20;
    t.check(sys::pred_param(0, 3, 0, target3).is_ok(), "set the second deadline");
    t.check(sys::env_sleep(0b1100) == Ok([3]) && ticks() >= target3, "woke naming predicate 3, the one that held");

    // Hostile: a predicate can never read what its installer could not.
    let mut kernel = Builder::new();
    kernel.load_u64(0xffff_8000_0000_0000).eq_imm(0);
    t.check(install(1, &kernel).is_ok(), "kernel-reading predicate installs (addresses are checked when read)");
    t.check(sys::env_sleep(0b10) == Err(Error::BadAddress), "kernel memory: BadAddress, not a wake");
    let mut unmapped = Builder::new();
    unmapped.load_u64(0x1000_0000).eq_imm(0);
    t.check(install(2, &unmapped).is_ok(), "unmapped-reading predicate installs");
    t.check(sys::env_sleep(0b100) == Err(Error::BadAddress), "unmapped memory: BadAddress");
    let mut unaligned = Builder::new();
    unaligned.load_u64(TICKS + 1).eq_imm(0);
    t.check(install(3, &unaligned).is_ok(), "unaligned-reading predicate installs");
    t.check(sys::env_sleep(0b1000) == Err(Error::BadAddress), "unaligned read: BadAddress");
    // Bad bytecode and bad arguments.
    let garbage = [0xffu8; 32];
    t.check(sys::pred_install(0, 1, garbage.as_ptr() as u64, 32) == Err(Error::Invalid), "garbage bytecode refused");
    t.check(sys::pred_install(0, 1, garbage.as_ptr() as u64, 15) == Err(Error::Invalid), "truncated bytecode refused");
    t.check(sys::pred_install(0, 1, garbage.as_ptr() as u64, MAX_BYTES as u64 + 16) == Err(Error::Invalid), "too long");
    t.check(sys::pred_install(0, 1, 0xffff_8000_0000_0000, 16) == Err(Error::BadAddress), "bytecode in kernel memory");
    t.check(sys::pred_install(0, 9, garbage.as_ptr() as u64, 16) == Err(Error::Invalid), "index out of range");
    t.check(sys::pred_param(0, 0, 8, 0) == Err(Error::Invalid), "parameter out of range");
    t.check(sys::env_sleep(0) == Err(Error::Invalid), "empty mask");
    t.check(sys::env_sleep(1 << 20) == Err(Error::Invalid), "mask beyond the slots");
    t.check(sys::pred_install(7, 0, garbage.as_ptr() as u64, 16) == Err(Error::BadCap), "foreign env slot");
    t.finish()
}

fn watch() -> i32 {
    let mut t = Checks::new("sleep watch");
    let me = oxok_libos::process::env_id();
    let row = (0..ENV_TABLE_ROWS).find(|&i| {
        exposed::env_row(i).is_some_and(|r| r.id != 0 && u64::from(r.id) != me && r.name.starts_with(b"spin"))
    });
    let Some(row) = row else {
        println!("sleep watch: FAIL no spin environment to watch");
        return 1;
    };
    let id_word = ENV_TABLE + (row as u64) * 64;
    let mut b = Builder::new();
    b.load_u32(id_word).eq_imm(0);
    t.check(install(0, &b).is_ok(), "install watch predicate");
    println!("sleep watch: watching env table row {row}");
    t.check(sys::env_sleep(1) == Ok([0]), "woke when the watched word changed");
    t.check(exposed::env_row(row).is_some_and(|r| r.id == 0), "the row really is empty");
    println!("sleep watch: watched word changed");
    t.finish()
}
