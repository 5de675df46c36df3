//! `slots`: the CPU as the kernel exposes it (Aegis §5.1: the time-slice
//! vector; Xok §3: exposed bookkeeping) — the slot vector's parameters and
//! current position, every slot's owner, generation and last use, and the
//! per-environment run statistics. All read from the read-only pages at
//! `SLOT_VECTOR` and `RUN_STATS`, without a system call; the kernel rewrites
//! them every tick, so a view is a snapshot taken while the shell runs.

use crate::tables::{env_name, envs, name_of};
use oxok_libos::abi::layout::{USE_DONATED, USE_IDLE, USE_NONE, USE_OWNER, USE_SPARE};
use oxok_libos::{exposed, println};

/// A slot's `USE_*` code in words.
fn use_name(code: u32) -> &'static str {
    match code {
        USE_NONE => "never run",
        USE_OWNER => "owner",
        USE_SPARE => "spare",
        USE_IDLE => "idle",
        USE_DONATED => "donated",
        _ => "?",
    }
}

/// `id (name)`, or `-` for no environment.
fn who(id: u32) -> alloc::string::String {
    if id == 0 { alloc::string::String::from("-") } else { alloc::format!("{id} {}", env_name(id)) }
}

/// `slots`: header, one row per slot, then run statistics per environment.
pub fn slots() {
    let Some(h) = exposed::slot_header() else {
        println!("slots: no slot vector exposed");
        return;
    };
    let hz = exposed::clock().map_or(0, |c| c.tick_hz);
    println!(
        "slot vector: {} slots of {} ticks ({hz} Hz timer), grace {} tick(s), critical grace {}, {} strikes",
        h.slots, h.ticks_per_slot, h.grace_ticks, h.critical_grace_ticks, h.max_strikes
    );
    println!("round {}, now slot {}: {} ({})", h.rounds, h.current, who(h.running), use_name(h.reason));
    println!("{:>4}  {:<22} {:>5}  {:<22} HOW", "SLOT", "OWNER", "GEN", "LAST RAN");
    let (mut owned, mut free) = (0, 0);
    for i in 0..h.slots as usize {
        let Some(row) = exposed::slot_row(i) else { break };
        if row.owner == 0 {
            free += 1;
        } else {
            owned += 1;
        }
        let mark = if i == h.current as usize { "*" } else { " " };
        println!(
            "{i:>3}{mark}  {:<22} {:>5}  {:<22} {}",
            if row.owner == 0 { alloc::string::String::from("free") } else { who(row.owner) },
            row.generation,
            who(row.last_env),
            use_name(row.last_use)
        );
    }
    println!("{owned} owned, {free} free (free slots are lent as spare time; * = the current slot)");
    println!();
    println!(
        "{:>7} {:<16} {:>8} {:>6} {:>6} {:>7} {:>5} {:>7} {:>8} {:>9}",
        "ID", "NAME", "TICKS", "OWNED", "SPARE", "DONATED", "DEBT", "STRIKES", "OVERRUNS", "DEFERRALS"
    );
    for env in envs() {
        let Some(r) = exposed::run_stats(u64::from(env.id)) else { continue };
        println!(
            "{:>7} {:<16} {:>8} {:>6} {:>6} {:>7} {:>5} {:>7} {:>8} {:>9}",
            env.id,
            name_of(&env),
            r.ticks,
            r.slots,
            r.spare_slots,
            r.donated,
            r.debt,
            r.strikes,
            r.overruns,
            r.deferrals
        );
    }
}
