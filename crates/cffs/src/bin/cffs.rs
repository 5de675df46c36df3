//! The host tool: `cffs mkfs IMG [BLOCKS]`, `cffs fsck IMG`,
//! `cffs crashtest [--depth N] [--jobs J]`, and for crash tests of Oxok
//! itself `cffs crashplan DEPTH FIRST N` (a boot's script) and
//! `cffs crashlog DIR...` (check logged boots). `cargo xtask
//! mkfs|fsck|crashtest` run it (built in release).

use std::path::Path;
use std::process::ExitCode;

use oxok_cffs::crash::workload::{SETUP, setup_full_table};
use oxok_cffs::crash::{Totals, guest, run_all};
use oxok_cffs::image;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = match words.as_slice() {
        ["mkfs", img] => mkfs(img, 16384),
        ["mkfs", img, n] => n.parse().map_err(|_| format!("bad block count {n}")).and_then(|n| mkfs(img, n)),
        ["fsck", img] => fsck(img),
        ["crashtest", rest @ ..] => crashtest(rest),
        ["crashplan", d, f, n] => plan_of(&[d, f, n]).map(|p| print!("{}", guest::script(&p))),
        ["crashlog", dirs @ ..] => crashlog(dirs),
        _ => Err("usage: cffs mkfs IMG [BLOCKS] | cffs fsck IMG | cffs crashtest [--depth N] [--jobs J] | cffs crashplan DEPTH FIRST N | cffs crashlog DIR...".into()),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cffs: {e}");
            ExitCode::FAILURE
        }
    }
}

fn mkfs(img: &str, n: u64) -> Result<(), String> {
    let image = image::mkfs(n).map_err(|e| format!("mkfs: {e}"))?;
    image::save(Path::new(img), &image)?;
    println!("cffs: {img}: {n} blocks of 4 KiB, root directory empty");
    Ok(())
}

fn fsck(img: &str) -> Result<(), String> {
    let (report, f) = image::check(image::load(Path::new(img))?).map_err(|e| format!("fsck: {e}"))?;
    println!(
        "cffs fsck {img}: {} blocks reachable, {} directories, {} files, {} orphans, {} wrong link counts, {} duplicates, {} errors",
        f.blocks,
        f.dirs,
        f.files,
        f.orphans,
        f.bad_nlinks,
        report.duplicates.len(),
        f.errors.len()
    );
    for e in &f.errors {
        println!("  {e}");
    }
    if f.clean() && report.duplicates.is_empty() && report.unreadable.is_empty() {
        Ok(())
    } else {
        Err("not clean".into())
    }
}

fn crashtest(rest: &[&str]) -> Result<(), String> {
    let (mut depth, mut jobs) = (3usize, 2usize);
    let mut it = rest.iter();
    while let Some(w) = it.next() {
        let v = it.next().and_then(|v| v.parse().ok()).filter(|&v| v > 0);
        match (*w, v) {
            ("--depth", Some(v)) => depth = v,
            ("--jobs", Some(v)) => jobs = v,
            _ => return Err(format!("crashtest: bad option {w}")),
        }
    }
    let mut all = Totals::default();
    for (name, setup, depth) in
        [("small tree", SETUP.to_vec(), depth), ("full inode table", setup_full_table(), depth.min(2))]
    {
        let handles: Vec<_> = (0..jobs)
            .map(|shard| {
                let setup = setup.clone();
                std::thread::spawn(move || {
                    let mut t = Totals::default();
                    run_all(&setup, depth, shard, jobs, &mut t);
                    t
                })
            })
            .collect();
        let mut part = Totals::default();
        for h in handles {
            let t = h.join().map_err(|_| "a crashtest thread panicked".to_string())?;
            part.add(&t);
        }
        println!(
            "crashtest: after the {name} setup, {} workloads of 1..={depth} operations, {} crash states",
            part.workloads, part.states
        );
        all.add(&part);
    }
    summary("crashtest", &all)
}

/// Prints the totals line (and the first problems); `Err` unless clean.
fn summary(what: &str, all: &Totals) -> Result<(), String> {
    println!(
        "{what}: {} workloads, {} crash states checked: {} lost fsynced data, {} dangling pointers, {} fsck failures, {} model mismatches",
        all.workloads, all.states, all.lost, all.dangling, all.fsck, all.model
    );
    for e in all.examples.iter().take(20) {
        println!("  {e}");
    }
    if all.ok() { Ok(()) } else { Err("crash consistency violated".into()) }
}

fn plan_of(words: &[&str]) -> Result<guest::Plan, String> {
    let n: Vec<usize> =
        words.iter().map(|w| w.trim().parse().map_err(|_| format!("bad number {w}"))).collect::<Result<_, _>>()?;
    match n.as_slice() {
        [d, f, k] if *d > 0 => Ok(guest::plan(*d, *f, *k)),
        _ => Err("a plan is DEPTH FIRST N".into()),
    }
}

/// Checks logged boots: each `DIR` holds `plan` (DEPTH FIRST N),
/// `disk.img` (the disk when the boot began), `log.img` (its
/// blklogwrites log) and `serial.log` (its console); one thread per
/// directory, at most two at a time.
fn crashlog(dirs: &[&str]) -> Result<(), String> {
    let mut all = Totals::default();
    for chunk in dirs.chunks(2) {
        let handles: Vec<_> = chunk
            .iter()
            .map(|d| {
                let dir = Path::new(d).to_path_buf();
                std::thread::spawn(move || -> Result<Totals, String> {
                    let read = |f: &str| std::fs::read(dir.join(f)).map_err(|e| format!("{}/{f}: {e}", dir.display()));
                    let plan =
                        plan_of(&String::from_utf8_lossy(&read("plan")?).split_whitespace().collect::<Vec<_>>())?;
                    let disk = image::load(&dir.join("disk.img"))?;
                    let serial = String::from_utf8_lossy(&read("serial.log")?).into_owned();
                    let mut t = Totals::default();
                    guest::check_boot(disk, &read("log.img")?, &plan, &serial, &mut t);
                    Ok(t)
                })
            })
            .collect();
        for h in handles {
            all.add(&h.join().map_err(|_| "a crashlog thread panicked".to_string())??);
        }
    }
    summary("crashtest --qemu", &all)
}
