//! Views of the machine, read straight from the kernel's exposed tables —
//! no system call involved (Xok's "expose information" principle).

use alloc::string::String;
use alloc::vec::Vec;
use oxok_libos::abi::frames::{OWNER_FREE, OWNER_KERNEL, OWNER_ORPHAN, OWNER_RESERVED};
use oxok_libos::abi::{ENV_ZOMBIE, EXIT_KILLED, EnvEntry};
use oxok_libos::{exposed, println};

/// An environment row's name (up to the first NUL).
pub fn name_of(row: &EnvEntry) -> String {
    let end = row.name.iter().position(|&b| b == 0).unwrap_or(row.name.len());
    String::from_utf8_lossy(&row.name[..end]).into_owned()
}

/// Every live row of the environment table.
pub fn envs() -> Vec<EnvEntry> {
    exposed::env_rows().filter(|r| r.id != 0).collect()
}

/// The name of live environment `id`; `(gone)` once it has ended (its
/// frames may still be on their way back to the free pool).
pub fn env_name(id: u32) -> String {
    exposed::env_entry(u64::from(id)).map_or_else(|| String::from("(gone)"), |r| alloc::format!("({})", name_of(&r)))
}

/// `ps`: the environment table, with each environment's ticks from the
/// run statistics.
pub fn ps() {
    println!(
        "{:>7} {:>7} {:<16} {:<9} {:>7} {:>8} {:>8} {:>6}",
        "ID", "PARENT", "NAME", "STATUS", "FRAMES", "RUNS", "TICKS", "EXIT"
    );
    for r in envs() {
        let exit = if r.status == ENV_ZOMBIE {
            if r.exit_status & EXIT_KILLED != 0 {
                alloc::format!("k{}", r.exit_status & 0xff)
            } else {
                alloc::format!("{}", r.exit_status as u32 as i32)
            }
        } else {
            String::from("-")
        };
        let ticks = exposed::run_stats(u64::from(r.id)).map_or(String::from("-"), |s| alloc::format!("{}", s.ticks));
        println!(
            "{:>7} {:>7} {:<16} {:<9} {:>7} {:>8} {:>8} {:>6}",
            r.id,
            r.parent,
            name_of(&r),
            oxok_libos::proc::status_name(r.status),
            r.frames,
            r.runs,
            ticks,
            exit
        );
    }
}

/// `frames`: the frame table summarised by owner, as a table: the free
/// pool, the kernel, reserved frames, orphans (owner gone, still mapped),
/// then each environment.
pub fn frames() {
    let Some(info) = exposed::sysinfo() else {
        println!("frames: no system-information page");
        return;
    };
    let (mut free, mut kernel, mut reserved, mut orphan, mut mapped, mut shared) = (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    let mut by_env: Vec<(u32, u64)> = Vec::new();
    for pfn in 0..info.frame_count {
        let Some(e) = exposed::frame_entry(pfn) else { continue };
        match e.owner {
            OWNER_FREE => free += 1,
            OWNER_KERNEL => kernel += 1,
            OWNER_RESERVED => reserved += 1,
            OWNER_ORPHAN => orphan += 1,
            id => match by_env.iter_mut().find(|(o, _)| *o == id) {
                Some((_, n)) => *n += 1,
                None => by_env.push((id, 1)),
            },
        }
        if e.maps > 0 {
            mapped += 1;
        }
        if e.maps > 1 {
            shared += 1;
        }
    }
    by_env.sort_unstable();
    println!("{} frames of 4 KiB in the frame table", info.frame_count);
    println!("{:<26} {:>9} {:>10}", "OWNER", "FRAMES", "KiB");
    let row = |what: &str, n: u64| println!("{what:<26} {n:>9} {:>10}", n * 4);
    row("free", free);
    row("kernel", kernel);
    row("reserved (firmware, holes)", reserved);
    row("orphaned (owner gone)", orphan);
    for (id, n) in by_env {
        row(&alloc::format!("env {id} {}", env_name(id)), n);
    }
    println!("mapped by some environment: {mapped} (by several: {shared})");
}

/// `mem`: totals from `mem_info`.
pub fn mem() {
    match oxok_libos::sys::mem_info() {
        Ok([total, free, size]) => {
            println!(
                "{} MiB usable, {} MiB free ({total} frames of {size} bytes)",
                (total * size) >> 20,
                (free * size) >> 20
            )
        }
        Err(e) => println!("mem: {e}"),
    }
}

/// `clock`: the clock page.
pub fn clock() {
    match exposed::clock() {
        Some(c) => {
            let secs = c.ticks.checked_div(c.tick_hz).unwrap_or(0);
            println!(
                "TSC {} MHz, timer {} Hz, {} ticks ({secs} s since boot)",
                c.tsc_hz / 1_000_000,
                c.tick_hz,
                c.ticks
            );
        }
        None => println!("clock: no clock page"),
    }
}

/// `caps`: this shell's own capability list.
pub fn caps() {
    println!("{:>4} {:<6} {:>10} {:<6}", "SLOT", "KIND", "NUMBER", "RIGHTS");
    for slot in 0..oxok_libos::abi::CAP_SLOTS as u64 {
        if let Ok([kind, number, rights]) = oxok_libos::sys::cap_info(slot) {
            let kind = match kind {
                1 => "frame",
                2 => "env",
                3 => "slot",
                _ => "?",
            };
            let r = |bit: u64, c: char| if rights & bit != 0 { c } else { '-' };
            println!("{slot:>4} {kind:<6} {number:>10} {}{}{}", r(1, 'r'), r(2, 'w'), r(4, 'g'));
        }
    }
}
