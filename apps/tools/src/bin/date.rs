//! date [+%s]: the wall-clock time in UTC (`Tue Nov 24 05:13:16 UTC 2026`),
//! or with `+%s` the seconds since 1970. The time is the clock page's
//! (the real-time clock read at boot, plus the TSC since), no kernel entry.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::{Args, eprintln, println};

oxok_libos::main!(main);

const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

fn main(args: Args) -> i32 {
    let Some(ns) = oxok_libos::time::unix_ns() else {
        eprintln!("date: the kernel found no real-time clock");
        return 1;
    };
    let secs = (ns / 1_000_000_000) as i64;
    match args.get(1) {
        None => {}
        Some("+%s") => {
            println!("{secs}");
            return 0;
        }
        Some(other) => {
            eprintln!("date: {other}: only `date` and `date +%s` are known");
            return 2;
        }
    }
    let days = secs.div_euclid(86_400);
    let rest = secs.rem_euclid(86_400);
    let (year, month, day) = oxok_http::date::civil_from_days(days);
    println!(
        "{} {} {day:2} {:02}:{:02}:{:02} UTC {year}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    );
    0
}
