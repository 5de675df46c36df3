//! `xn`: XN's table the kernel exposes read-only — the disk and its
//! requests, the free map (as runs of allocated blocks), the roots, each
//! file system's usage and the buffer-cache registry.

use oxok_libos::abi::xn::{MAX_FS, state};
use oxok_libos::{exposed, println, xn};

fn state_name(s: u8) -> &'static str {
    match s {
        state::CLEAN => "clean",
        state::DIRTY => "dirty",
        state::TAINTED => "tainted",
        state::IN_FLIGHT => "in-flight",
        _ => "?",
    }
}

/// Prints XN's table.
pub fn xn() {
    let Some(h) = xn::header() else {
        println!("xn: no disk");
        return;
    };
    println!(
        "disk {} blocks  free {}  allocated {}  cached {}  will-free {}",
        h.nblocks, h.free, h.registered, h.cached, h.will_free
    );
    println!(
        "requests {}  pending {}  errors {}  catalogue {}  recovered {} (duplicates {})",
        h.submitted,
        (h.submitted + 1).saturating_sub(h.oldest_pending),
        h.errors,
        if h.catalog_pending == 0 { "durable" } else { "pending" },
        h.recovered,
        h.duplicates
    );
    println!("block writes {} in {} device requests", h.writes, h.write_requests);
    if h.interrupted > 0 {
        println!("completion interrupts collected {} completions", h.interrupted);
    } else {
        println!("completion interrupts: none yet (completions found by ticks and calls)");
    }
    // The free map as runs of allocated blocks.
    let mut runs = alloc::string::String::new();
    let mut b = 0;
    let mut shown = 0;
    while b < h.nblocks && shown < 16 {
        if xn::is_free(b) == Some(false) {
            let start = b;
            while b < h.nblocks && xn::is_free(b) == Some(false) {
                b += 1;
            }
            if b - start == 1 {
                runs.push_str(&alloc::format!(" {start}"));
            } else {
                runs.push_str(&alloc::format!(" {start}-{}", b - 1));
            }
            shown += 1;
        }
        b += 1;
    }
    println!("allocated:{}", if runs.is_empty() { " none" } else { &runs });
    // Per-root usage: every listed block counts for the root its parent
    // chain reaches.
    let rows: alloc::vec::Vec<_> = xn::rows().collect();
    let parents: alloc::collections::BTreeMap<u64, u64> = rows.iter().map(|r| (r.block, r.parent)).collect();
    let root_of = |mut b: u64| {
        for _ in 0..64 {
            match parents.get(&b) {
                Some(&u64::MAX) => return Some(b),
                Some(&p) => b = p,
                None => return None,
            }
        }
        None
    };
    for i in 0..h.roots as usize {
        if let Some(r) = xn::root_row(i) {
            let used = rows.iter().filter(|row| root_of(row.block) == Some(r.block)).count();
            println!("root {}: fs {} type {}, {used} blocks", r.block, r.fs, r.ty);
        }
    }
    for i in 0..(h.fss as usize).min(MAX_FS) {
        if let Some(f) = exposed::xn_fs(i) {
            println!("fs {i}: {} templates, {} blocks", f.templates, f.blocks);
        }
    }
    println!("{:>8} {:>3} {:>5} {:>8} {:>8} {:>10}", "BLOCK", "FS", "TYPE", "PARENT", "FRAME", "STATE");
    for r in &rows {
        let parent =
            if r.parent == u64::MAX { alloc::string::String::from("root") } else { alloc::format!("{}", r.parent) };
        let frame =
            if r.frame == u64::MAX { alloc::string::String::from("-") } else { alloc::format!("{:#x}", r.frame) };
        let st = if r.will_free == 1 { "will-free" } else { state_name(r.state) };
        println!("{:>8} {:>3} {:>5} {:>8} {:>8} {:>10}", r.block, r.fs, r.ty, parent, frame, st);
    }
}
