//! `top [-n FRAMES] [-d MS]`: a live view of who has the CPU, redrawn every
//! second (or `-d` milliseconds) until `q` or ^C is typed — or, with `-n`,
//! after `FRAMES` redraws without reading the keyboard. Each frame shows the slot vector's position and how
//! many slots are owned, then every environment with the ticks it ran
//! since the previous frame as a share of the CPU, busiest first. Like the
//! other views it reads only the exposed tables; it sleeps between frames
//! with a wakeup predicate, so it costs nothing while it waits.

use crate::tables::{envs, name_of};
use alloc::vec::Vec;
use oxok_libos::{console, eprintln, exposed, print, println};

/// ESC[H ESC[2J: cursor home, clear the screen.
const CLEAR: &str = "\x1b[H\x1b[2J";

/// The options of one `top`: frame count (`None`: until `q`) and period.
struct Options {
    frames: Option<u64>,
    period_ms: u64,
}

fn parse(args: &[&str]) -> Result<Options, &'static str> {
    let mut o = Options { frames: None, period_ms: 1000 };
    let mut it = args.iter();
    while let Some(&a) = it.next() {
        let value = it.next().and_then(|v| v.parse::<u64>().ok());
        match (a, value) {
            ("-n", Some(n)) if n > 0 => o.frames = Some(n),
            ("-d", Some(ms)) if (10..=60_000).contains(&ms) => o.period_ms = ms,
            _ => return Err("usage: top [-n FRAMES] [-d MS]  (MS from 10 to 60000)"),
        }
    }
    Ok(o)
}

/// One environment's line: id, name, ticks now.
struct Sample {
    id: u32,
    name: alloc::string::String,
    frames: u32,
    ticks: u64,
}

fn sample() -> Vec<Sample> {
    envs()
        .iter()
        .map(|r| Sample {
            id: r.id,
            name: name_of(r),
            frames: r.frames,
            ticks: exposed::run_stats(u64::from(r.id)).map_or(0, |s| s.ticks),
        })
        .collect()
}

/// Draws one frame: the CPU share of each environment since `before`.
fn draw(frame: u64, before: &[Sample], now: &[Sample]) {
    let clock = exposed::clock();
    let hz = clock.map_or(0, |c| c.tick_hz);
    let uptime = clock.map_or(0, |c| c.ticks.checked_div(c.tick_hz).unwrap_or(0));
    println!("top: frame {frame}, up {uptime} s, timer {hz} Hz, {} environments (q or ^C quits)", now.len());
    if let Some(h) = exposed::slot_header() {
        let owned = (0..h.slots as usize).filter_map(exposed::slot_row).filter(|r| r.owner != 0).count();
        println!(
            "slot vector: round {}, slot {} of {} now, {owned} owned, running {}",
            h.rounds, h.current, h.slots, h.running
        );
    }
    let mut rows: Vec<(u64, &Sample)> = now
        .iter()
        .map(|s| {
            let old = before.iter().find(|b| b.id == s.id).map_or(s.ticks, |b| b.ticks);
            (s.ticks.saturating_sub(old), s)
        })
        .collect();
    let total: u64 = rows.iter().map(|(d, _)| d).sum::<u64>().max(1);
    rows.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.id.cmp(&b.1.id)));
    println!("{:>7} {:<16} {:>7} {:>8} {:>5}", "ID", "NAME", "FRAMES", "TICKS", "CPU%");
    for (delta, s) in rows {
        println!("{:>7} {:<16} {:>7} {:>8} {:>5}", s.id, s.name, s.frames, s.ticks, delta * 100 / total);
    }
}

/// True once `q`, `Q` or ^C has been typed (other keys are dropped).
fn quit_typed() -> bool {
    let mut buf = [0u8; 16];
    matches!(console::try_read(&mut buf), Ok(n) if buf[..n].iter().any(|&b| matches!(b, b'q' | b'Q' | 3)))
}

/// `top`: see the module documentation. Status 0, or 2 for bad options.
pub fn top(args: &[&str]) -> i32 {
    let o = match parse(args) {
        Ok(o) => o,
        Err(usage) => {
            eprintln!("{usage}");
            return 2;
        }
    };
    let mut before = sample();
    let mut frame = 0;
    loop {
        if oxok_libos::time::sleep_ms(o.period_ms).is_err() {
            eprintln!("top: cannot sleep");
            return 1;
        }
        frame += 1;
        let now = sample();
        print!("{CLEAR}");
        draw(frame, &before, &now);
        before = now;
        // With `-n` the keyboard is left alone (type-ahead is for the shell).
        let done = match o.frames {
            Some(n) => frame >= n,
            None => quit_typed(),
        };
        if done {
            return 0;
        }
    }
}
