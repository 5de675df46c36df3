//! Crash states (CrashMonkey): for every flush epoch, the disk as it was
//! durable at the epoch's start plus a subset of the writes issued in the
//! epoch, applied in order — every subset while there are at most
//! [`ALL_SUBSETS`] writes, else every prefix, every single write and every
//! "all but one". Each state is recovered (XN from the superblock, then
//! mount's repairs) and checked: no reachable block older than its
//! allocation, fsck clean before (but for repairable counts) and after
//! repair, and every expectation met.

use std::collections::HashSet;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use super::oracle::{Expect, Step, expect};
use crate::host::{Event, MemDisk};
use crate::layout::Block;
use crate::{Fs, fsck};

/// Epochs with at most this many writes are explored exhaustively.
pub const ALL_SUBSETS: usize = 6;

/// What went wrong in one state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bug {
    /// XN recovery found a block owned twice or unreadable metadata.
    Recovery,
    /// A reachable block was not written since it was allocated.
    Dangling,
    /// fsck errors (before or after mount's repairs), or mount failed.
    Fsck,
    /// An expectation (fsynced data, size, name) failed.
    Lost,
}

/// The states of one recorded run and what they found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// States checked (distinct images per epoch).
    pub states: u64,
    /// Problems, one line each, with their class.
    pub bugs: Vec<(Bug, String)>,
}

/// The subsets of `n` writes explored (as index lists, in order).
pub fn subsets(n: usize) -> Vec<Vec<usize>> {
    if n <= ALL_SUBSETS {
        return (0..1u32 << n).map(|m| (0..n).filter(|i| m & (1 << i) != 0).collect()).collect();
    }
    let mut v: Vec<Vec<usize>> = (0..=n).map(|k| (0..k).collect()).collect();
    v.extend((0..n).map(|i| vec![i]));
    v.extend((0..n).map(|i| (0..n).filter(|&j| j != i).collect()));
    v
}

/// Enumerates and checks every crash state of `events` recorded over
/// `initial` (durable), with the run's `steps`.
pub fn check_run(initial: &[Block], events: &[Event], steps: &[Step], owner: u64) -> Outcome {
    let mut out = Outcome::default();
    let allocs = Allocs::of(events);
    let mut image = initial.to_vec();
    let mut writer: Vec<Option<usize>> = vec![None; image.len()];
    let mut base = 0;
    let mut epoch: Vec<usize> = Vec::new();
    for (i, e) in events.iter().enumerate().chain([(events.len(), &Event::Flush)]) {
        match e {
            Event::Write { .. } => epoch.push(i),
            Event::Alloc { .. } => {}
            Event::Flush => {
                let mut seen = HashSet::new();
                for s in subsets(epoch.len()) {
                    let mut img = image.clone();
                    let mut w = writer.clone();
                    let mut last = std::collections::BTreeMap::new();
                    for &k in &s {
                        if let Some(block) = land(events, epoch[k], &mut img, &mut w) {
                            last.insert(block, epoch[k]);
                        }
                    }
                    let mut h = DefaultHasher::new();
                    last.hash(&mut h);
                    if seen.insert(h.finish()) {
                        out.states += 1;
                        check_state(img, &w, &allocs, steps, base, i, owner, &mut out);
                    }
                }
                for &k in &epoch {
                    land(events, k, &mut image, &mut writer);
                }
                epoch.clear();
                base = i + 1;
            }
        }
    }
    out
}

/// Applies write event `k` to `image` (recording its writer); the block.
fn land(events: &[Event], k: usize, image: &mut [Block], writer: &mut [Option<usize>]) -> Option<u64> {
    let Some(Event::Write { block, data }) = events.get(k) else { return None };
    *image.get_mut(*block as usize)? = **data;
    *writer.get_mut(*block as usize)? = Some(k);
    Some(*block)
}

/// Where each block was allocated: event positions, ascending.
struct Allocs(std::collections::HashMap<u64, Vec<usize>>);

impl Allocs {
    fn of(events: &[Event]) -> Allocs {
        let mut m: std::collections::HashMap<u64, Vec<usize>> = std::collections::HashMap::new();
        for (i, e) in events.iter().enumerate() {
            if let Event::Alloc { start, len } = e {
                for b in *start..start.saturating_add(*len) {
                    m.entry(b).or_default().push(i);
                }
            }
        }
        Allocs(m)
    }

    /// The last allocation of `block` recorded before event `before`.
    fn last(&self, block: u64, before: usize) -> Option<usize> {
        let v = self.0.get(&block)?;
        let n = v.partition_point(|&i| i < before);
        n.checked_sub(1).and_then(|k| v.get(k)).copied()
    }
}

#[allow(clippy::too_many_arguments)]
fn check_state(
    img: Vec<Block>,
    writer: &[Option<usize>],
    allocs: &Allocs,
    steps: &[Step],
    base: usize,
    window: usize,
    owner: u64,
    out: &mut Outcome,
) {
    let tag = format!("state base={base} window={window}");
    let (mut disk, report) = match MemDisk::open(img, owner) {
        Ok(x) => x,
        Err(e) => return out.bugs.push((Bug::Recovery, format!("{tag}: XN recovery refused: {e}"))),
    };
    if !report.duplicates.is_empty() || !report.unreadable.is_empty() {
        out.bugs.push((Bug::Recovery, format!("{tag}: {report:?}")));
    }
    for (b, _) in disk.xn().blocks() {
        if let Some(a) = allocs.last(b, window)
            && writer.get(b as usize).copied().flatten().is_none_or(|w| w < a)
        {
            out.bugs.push((Bug::Dangling, format!("{tag}: block {b} reachable, allocated at {a}, not written since")));
        }
    }
    match fsck(&mut disk) {
        Ok(f) if f.errors.is_empty() => {}
        Ok(f) => out.bugs.push((Bug::Fsck, format!("{tag}: fsck before repair: {:?}", f.errors))),
        Err(e) => out.bugs.push((Bug::Fsck, format!("{tag}: fsck before repair: {e}"))),
    }
    let mut fs = match Fs::mount(disk, owner) {
        Ok((fs, _)) => fs,
        Err(e) => return out.bugs.push((Bug::Fsck, format!("{tag}: mount: {e}"))),
    };
    let mut after = fs.into_disk();
    match fsck(&mut after) {
        Ok(f) if f.clean() => {}
        Ok(f) => out.bugs.push((Bug::Fsck, format!("{tag}: fsck after repair: {f:?}"))),
        Err(e) => out.bugs.push((Bug::Fsck, format!("{tag}: fsck after repair: {e}"))),
    }
    fs = match Fs::mount(after, owner) {
        Ok((fs, _)) => fs,
        Err(e) => return out.bugs.push((Bug::Fsck, format!("{tag}: second mount: {e}"))),
    };
    for (key, e) in expect(steps, base, window) {
        let ok = match &e {
            Expect::Dir => fs.stat(&key).is_ok_and(|s| s.kind == crate::Kind::Dir),
            Expect::File(paths, want) => paths.iter().any(|p| {
                let mut buf = vec![0; want.len() + 1];
                fs.stat(p).is_ok_and(|s| s.size == want.len() as u64)
                    && fs.read(p, 0, &mut buf).is_ok_and(|n| n == want.len() && buf[..n] == want[..])
            }),
        };
        if !ok {
            out.bugs.push((Bug::Lost, format!("{tag}: {key}: expected {}", describe(&e))));
        }
    }
}

fn describe(e: &Expect) -> String {
    match e {
        Expect::Dir => "a directory".into(),
        Expect::File(p, c) => format!("{} bytes under {p:?}", c.len()),
    }
}
