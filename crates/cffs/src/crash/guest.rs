//! Crash testing the real system: workloads run by `crashrun` on Oxok
//! (C-FFS over the kernel's XN calls, `oxok_libos::xn::XnDisk`), whose
//! disk QEMU's `blklogwrites` logs ([`super::dmlog`]). The host writes a
//! boot's [`Plan`] as a [`script`](crate::script), the guest runs it and
//! prints, after every operation, whether it succeeded and the kernel's
//! count of write requests (XN's `writes`), and for every fsync the
//! file's size and hash as it read it back. [`check_boot`] then turns the
//! log into events, the printed counts into the steps of the same oracle
//! the host harness uses, and checks every crash state with the same code
//! ([`super::states::check_run`]).

use std::collections::BTreeSet;

use oxok_abi::xn::CATALOG_BLOCKS;

use super::model::Model;
use super::oracle::{Step, all_facts, step_of, touched};
use super::workload::{Op, SETUP, model_apply, pool};
use super::{Totals, dmlog, nth, states, tally};
use crate::host::{Event, MemDisk};
use crate::layout::{Block, SUPER_BLOCK, owner};
use crate::script::hash;

/// Workloads per boot (each uses about 40–70 blocks of the disk; 27: the
/// one-operation workloads in one boot).
pub const PER_BOOT: usize = 27;
/// The disk of a boot, in MiB.
pub const DISK_MIB: u64 = 16;

/// Workloads of 1..=`depth` operations from the pool.
pub fn count(depth: usize) -> usize {
    (1..=depth).map(|len| pool().len().pow(len as u32)).sum()
}

/// Workload `n` (in [`super::run_all`]'s order) of 1..=`depth` operations.
pub fn workload(depth: usize, mut n: usize) -> Option<Vec<Op>> {
    let pool = pool();
    for len in 1..=depth {
        let total = pool.len().pow(len as u32);
        if n < total {
            return Some(nth(&pool, len, n));
        }
        n -= total;
    }
    None
}

/// One boot's operations.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Every operation, in order (script line `i` is `ops[i].cmd(i)`).
    pub ops: Vec<Op>,
    /// Workloads in it.
    pub workloads: usize,
    /// The workloads' labels, by the index of their first operation.
    pub labels: Vec<(usize, String)>,
}

/// `path` under `dir`, as a `'static` string: the harness's operations
/// name paths by `&'static str`, so a boot's few hundred prefixed paths
/// live until the process ends.
fn under(dir: &str, path: &'static str) -> &'static str {
    Box::leak(format!("{dir}{path}").into_boxed_str())
}

fn prefixed(op: &Op, d: &str) -> Op {
    match *op {
        Op::Create(p) => Op::Create(under(d, p)),
        Op::Mkdir(p) => Op::Mkdir(under(d, p)),
        Op::Write(p, o, n) => Op::Write(under(d, p), o, n),
        Op::Append(p, n) => Op::Append(under(d, p), n),
        Op::Truncate(p, n) => Op::Truncate(under(d, p), n),
        Op::Rename(a, b) => Op::Rename(under(d, a), under(d, b)),
        Op::Link(a, b) => Op::Link(under(d, a), under(d, b)),
        Op::Unlink(p) => Op::Unlink(under(d, p)),
        Op::Fsync(p) => Op::Fsync(under(d, p)),
        Op::Sync => Op::Sync,
    }
}

/// Workloads `first..first + n` of depth `depth`, each in its own
/// directory `/wK`: the small tree ([`SETUP`], ending in a sync), the
/// workload, and a final sync.
pub fn plan(depth: usize, first: usize, n: usize) -> Plan {
    let mut p = Plan { ops: Vec::new(), workloads: 0, labels: Vec::new() };
    for k in first..first + n {
        let Some(w) = workload(depth, k) else { break };
        let dir = format!("/w{k}");
        let label = w.iter().map(|o| o.to_string()).collect::<Vec<_>>().join("; ");
        p.labels.push((p.ops.len(), format!("w{k}: {label}")));
        p.ops.push(Op::Mkdir(under("", Box::leak(dir.clone().into_boxed_str()))));
        p.ops.extend(SETUP.iter().chain(&w).map(|o| prefixed(o, &dir)));
        if w.last() != Some(&Op::Sync) {
            p.ops.push(Op::Sync);
        }
        p.workloads += 1;
    }
    p
}

/// The script of a plan, ending with a line `end`.
pub fn script(p: &Plan) -> String {
    let mut s: String = p.ops.iter().enumerate().map(|(i, o)| o.cmd(i).line() + "\n").collect();
    s.push_str("end\n");
    s
}

/// What `crashrun` printed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Printed {
    /// Per operation: its error (`None`: it succeeded) and `writes` after it.
    pub ops: Vec<(Option<String>, u64)>,
    /// Per fsynced file: operation, path, size, hash of the content read.
    pub fsynced: Vec<(usize, String, u64, u64)>,
    /// `writes` when it finished (after a final sync).
    pub done: Option<u64>,
}

/// Reads `crashrun:` lines from a serial log.
pub fn parse_printed(serial: &str) -> Result<Printed, String> {
    let mut p = Printed::default();
    for line in serial.lines().filter_map(|l| l.trim_end_matches('\r').strip_prefix("crashrun: ")) {
        let w: Vec<&str> = line.split(' ').collect();
        let num = |s: &str| s.parse::<u64>().map_err(|_| format!("bad number in {line:?}"));
        match w.as_slice() {
            ["op", i, "ok", l] => {
                if num(i)? != p.ops.len() as u64 {
                    return Err(format!("operation out of order: {line:?}"));
                }
                p.ops.push((None, num(l)?));
            }
            ["op", i, "no", e, l] => {
                if num(i)? != p.ops.len() as u64 {
                    return Err(format!("operation out of order: {line:?}"));
                }
                p.ops.push((Some(e.to_string()), num(l)?));
            }
            ["fsynced", i, path, size, h] => {
                let h = u64::from_str_radix(h, 16).map_err(|_| format!("bad hash in {line:?}"))?;
                p.fsynced.push((num(i)? as usize, path.to_string(), num(size)?, h));
            }
            ["done", l] => p.done = Some(num(l)?),
            _ => {}
        }
    }
    Ok(p)
}

/// Checks one boot into `t`: `disk` is the image when the boot began
/// (the kernel's catalogue first), `log` the boot's write log, `serial`
/// its console. Problems with the run itself (the guest did not finish,
/// the log and the kernel's count disagree, the guest and the model
/// disagree) count as model mismatches.
pub fn check_boot(disk: Vec<Block>, log: &[u8], plan: &Plan, serial: &str, t: &mut Totals) {
    t.workloads += plan.workloads as u64;
    if let Err(e) = check_inner(disk, log, plan, serial, t) {
        t.model += 1;
        t.note(e);
    }
}

fn label(plan: &Plan, op: usize) -> &str {
    plan.labels.iter().rev().find(|(at, _)| *at <= op).map_or("setup", |(_, l)| l.as_str())
}

fn check_inner(mut image: Vec<Block>, log: &[u8], plan: &Plan, serial: &str, t: &mut Totals) -> Result<(), String> {
    let printed = parse_printed(serial)?;
    let done = printed.done.ok_or("crashrun did not finish")?;
    if printed.ops.len() != plan.ops.len() {
        return Err(format!("crashrun ran {} of {} operations", printed.ops.len(), plan.ops.len()));
    }
    image.drain(..(CATALOG_BLOCKS as usize).min(image.len()));
    let who = image.get(SUPER_BLOCK as usize).map(owner).ok_or("empty disk")?;
    let replay = dmlog::to_events(&dmlog::parse(log)?, CATALOG_BLOCKS)?;
    if replay.at.len() as u64 != done + 1 {
        return Err(format!("the log holds {} written blocks, the kernel wrote {done}", replay.at.len() - 1));
    }
    // Blocks free when the boot began: reachable later only once written.
    let (d, _) = MemDisk::open(image.clone(), who).map_err(|e| format!("initial image: {e}"))?;
    let used: BTreeSet<u64> = d.xn().blocks().map(|(b, _)| b).collect();
    let mut events: Vec<Event> =
        (0..image.len() as u64).filter(|b| !used.contains(b)).map(|b| Event::Alloc { start: b, len: 1 }).collect();
    let a = events.len();
    events.extend(replay.events.iter().cloned());
    // An operation ends after its last write and the flush right after it,
    // if any: a flush of its own, or — when QEMU dropped its flush as
    // following no write — the earlier one that made the same writes
    // durable.
    let at = |l: u64| {
        let e = *replay.at.get(l as usize).ok_or(format!("write count {l} past the log"))?;
        Ok::<usize, String>(a + e + usize::from(matches!(replay.events.get(e), Some(Event::Flush))))
    };
    let mut m = Model::default();
    let mut steps = vec![Step { start: 0, end: 0, touched: Vec::new(), renamed: None, durable: all_facts(&m) }];
    let mut start = a;
    for (i, (op, (err, l))) in plan.ops.iter().zip(&printed.ops).enumerate() {
        let before = touched(&m, op);
        let ok = model_apply(&mut m, op, i);
        let odd = err.as_deref().is_some_and(|e| ["Refused", "Corrupt", "Stuck"].iter().any(|k| e.starts_with(k)));
        if ok != err.is_none() || odd {
            t.model += 1;
            t.note(format!("[{}] {op}: Oxok {err:?}, model ok={ok}", label(plan, i)));
        }
        let end = at(*l)?;
        steps.push(step_of(&m, op, ok, before, start, end));
        start = end;
        for (_, path, size, h) in printed.fsynced.iter().filter(|f| f.0 == i) {
            let want = m.file(path).and_then(|k| m.files.get(k));
            if want.is_none_or(|c| c.len() as u64 != *size || hash(c) != *h) {
                t.model += 1;
                t.note(format!("[{}] {path} read back after fsync: {size} bytes, hash {h:x}", label(plan, i)));
            }
        }
    }
    tally(states::check_run(&image, &events, &steps, who), "boot", t);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::Cmd;

    #[test]
    fn plans_enumerate_every_workload_once_each_in_its_directory() {
        assert_eq!(count(1), pool().len());
        assert_eq!(workload(2, pool().len()), Some(vec![pool()[0].clone(), pool()[0].clone()]));
        assert_eq!(workload(1, pool().len()), None);
        let p = plan(1, 3, 2);
        assert_eq!(p.workloads, 2);
        assert_eq!(p.ops[0], Op::Mkdir("/w3"));
        assert!(p.ops.contains(&Op::Create("/w4/A/f")));
        let s = script(&p);
        assert!(s.ends_with("sync\nend\n"));
        assert!(s.lines().filter(|l| *l != "end").all(|l| Cmd::parse(l).is_some()), "{s}");
    }

    #[test]
    fn printed_lines_are_read_in_order_and_checked() {
        let text = "echo\r\ncrashrun: op 0 ok 0\r\ncrashrun: op 1 no NotFound 3\ncrashrun: fsynced 1 /a 5 ff\ncrashrun: done 7\n";
        let p = parse_printed(text).unwrap();
        assert_eq!(p.ops, vec![(None, 0), (Some("NotFound".into()), 3)]);
        assert_eq!(p.fsynced, vec![(1, "/a".into(), 5, 0xff)]);
        assert_eq!(p.done, Some(7));
        assert!(parse_printed("crashrun: op 1 ok 0\n").is_err(), "a skipped operation");
    }

    /// A boot that never finished, or whose log the kernel's count does not
    /// match, is a failure, not a pass.
    #[test]
    fn a_broken_run_is_reported() {
        let disk = crate::image::mkfs(256).unwrap();
        let mut full = vec![[0u8; 4096]; CATALOG_BLOCKS as usize];
        full.extend(disk);
        let p = plan(1, 0, 1);
        let mut t = Totals::default();
        check_boot(full.clone(), &[], &p, "crashrun: op 0 ok 0\n", &mut t);
        assert_eq!((t.workloads, t.model), (1, 1));
        let printed: String = (0..p.ops.len()).map(|i| format!("crashrun: op {i} ok 0\n")).collect();
        let log = dmlog::encode(&dmlog::Log { sector_size: 4096, entries: Vec::new() });
        let mut t = Totals::default();
        check_boot(full, &log, &p, &format!("{printed}crashrun: done 2\n"), &mut t);
        assert_eq!(t.model, 1, "{:?}", t.examples);
    }

    /// Runs `plan` on the host's recording disk as `crashrun` runs it on
    /// Oxok, and returns the boot's disk, its log and what it printed.
    fn host_boot(plan: &Plan) -> (Vec<Block>, Vec<u8>, String) {
        use crate::Fs;
        let owner = 11;
        let fs = Fs::mkfs(MemDisk::blank(1024, owner, 0xa5).unwrap(), owner).unwrap();
        let image = fs.into_disk().image().to_vec();
        let (mut disk, _) = MemDisk::open(image.clone(), owner).unwrap();
        disk.record();
        let (mut fs, _) = Fs::mount(disk, owner).unwrap();
        let mut printed = String::new();
        let logged = |fs: &Fs<MemDisk>| fs.disk().events().iter().filter(|e| matches!(e, Event::Write { .. })).count();
        for (i, op) in plan.ops.iter().enumerate() {
            match op.cmd(i).run(&mut fs) {
                Ok(()) => printed += &format!("crashrun: op {i} ok {}\n", logged(&fs)),
                Err(e) => printed += &format!("crashrun: op {i} no {e:?} {}\n", logged(&fs)),
            }
        }
        printed += &format!("crashrun: done {}\n", logged(&fs));
        // As QEMU logs them: a flush that follows no write is dropped.
        let mut wrote = false;
        let entries = fs
            .into_disk()
            .events()
            .iter()
            .filter_map(|e| match e {
                Event::Write { block, data } => {
                    wrote = true;
                    Some(dmlog::Entry { sector: block + CATALOG_BLOCKS, nr_sectors: 1, flags: 0, data: data.to_vec() })
                }
                Event::Flush if std::mem::take(&mut wrote) => {
                    Some(dmlog::Entry { sector: 0, nr_sectors: 0, flags: dmlog::FLUSH, data: Vec::new() })
                }
                _ => None,
            })
            .collect();
        let mut full = vec![[0u8; 4096]; CATALOG_BLOCKS as usize];
        full.extend(image);
        (full, dmlog::encode(&dmlog::Log { sector_size: 4096, entries }), printed)
    }

    /// The whole path on the host's disk: a log of C-FFS's writes, replayed
    /// into every crash state, finds nothing wrong ...
    #[test]
    fn a_logged_run_of_the_real_file_system_passes() {
        let p = plan(1, 0, 6);
        let (disk, log, printed) = host_boot(&p);
        let mut t = Totals::default();
        check_boot(disk, &log, &p, &printed, &mut t);
        assert!(t.ok(), "{:?}", t.examples);
        assert_eq!(t.workloads, 6);
        assert!(t.states > 30, "{}", t.states);
    }

    /// ... and the same log with one written block's data lost is caught.
    #[test]
    fn a_lost_write_in_the_log_is_found() {
        let p = plan(1, 0, 2);
        let (disk, log, printed) = host_boot(&p);
        let mut parsed = dmlog::parse(&log).unwrap();
        // The last data write of the first workload's 5000-byte file,
        // which its setup's sync made durable: blanked.
        let want = crate::script::pattern(3, 5000);
        let e = parsed.entries.iter_mut().find(|e| e.data.starts_with(&want[..64])).unwrap();
        e.data.iter_mut().for_each(|b| *b = 0);
        let mut t = Totals::default();
        check_boot(disk, &dmlog::encode(&parsed), &p, &printed, &mut t);
        assert!(t.lost > 0, "{t:?}");
    }
}
