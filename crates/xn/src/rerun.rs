//! `owns` again after a change, only where the change can matter.
//!
//! A file system's change to a directory block touches one record, but
//! `owns` reads every record: run over the whole block after each change it
//! was most of what XN spent on a small file's create or unlink. A UDF is
//! deterministic and reads nothing but its block, so a run over the new
//! content takes the same steps as the run over the old one up to the
//! first step that reads a word the change touched. The run over the old
//! content is kept as an [`OwnsRun`]: where it stood at the start of each
//! pass of its outermost loops (a mark), what it had emitted there, and the
//! words it read from each mark to the next. The run over the new content
//! starts at the last mark before the first read of a changed word, with
//! the results emitted before it; and at each later mark from which the
//! old run read no changed word, if the new run stands where the old one
//! stood — same instruction, same open loops at the same passes, the same
//! values in every register still to be read ([`crate::live`]) — the rest
//! of the old run is the rest of the new one, results and marks alike.
//! Anything else runs on to the end: the result is always the one a whole
//! run would give (host tests compare them on random changes).

use alloc::vec::Vec;
use core::mem;

use oxok_abi::xn::{BLOCK_SIZE, MAX_EXTENTS};

use crate::udf::{Sink, State};
use crate::{Emit, Extent, Fault, Owned, OwnsError, ReadSet, SetError, Template, Udf};

/// One `ext` result, as emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Raw {
    pub(crate) start: u64,
    pub(crate) len: u64,
    pub(crate) ty: u64,
}

/// Where a run stood at the start of a pass of an outermost loop (or at
/// its start), how many results it had emitted, and the words it read from
/// there to the next mark or its end.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mark {
    at: State,
    emitted: usize,
    reads: ReadSet,
}

/// Most marks a run keeps (a directory of C-FFS takes 32): past them, the
/// last segment runs to the end.
const MAX_MARKS: usize = 64;

/// A run of `owns` over one block, kept for the block's next change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnsRun {
    results: Vec<Raw>,
    marks: Vec<Mark>,
    reads: ReadSet,
}

impl OwnsRun {
    /// Every word the run read, and perhaps some an earlier run of the
    /// block read (a run again adds its new segments' words and takes
    /// none away): blocks that agree there take the same steps.
    pub fn reads(&self) -> &ReadSet {
        &self.reads
    }
}

/// Collects a run's results and marks; while running again, stops where
/// the earlier run can take over.
struct Recorder<'a> {
    results: Vec<Raw>,
    /// Marks after the one the run started from.
    fresh: Vec<Mark>,
    /// Marks before and at the start (their number).
    before: usize,
    /// The segment the run is in, while it has no mark of its own in
    /// `fresh` (the start's).
    start_reads: ReadSet,
    /// Running again: the earlier run's marks, the first from which none of
    /// its segments read a changed word, and the program.
    earlier: Option<(&'a [Mark], usize, &'a Udf)>,
    /// The earlier mark the run met.
    met: Option<usize>,
}

impl<'a> Recorder<'a> {
    /// A recorder for a run whose marks up to where it starts are
    /// `before` in number, with `results` emitted so far; running again,
    /// `earlier` is the old run to meet ([`Recorder::earlier`]).
    fn new(results: Vec<Raw>, before: usize, earlier: Option<(&'a [Mark], usize, &'a Udf)>) -> Self {
        Recorder { results, fresh: Vec::new(), before, start_reads: ReadSet::default(), earlier, met: None }
    }

    /// Where the reads of the segment the run is in go.
    fn segment(&mut self) -> &mut ReadSet {
        match self.fresh.last_mut() {
            Some(m) => &mut m.reads,
            None => &mut self.start_reads,
        }
    }
}

impl Sink for Recorder<'_> {
    const PASSES: bool = true;

    fn emit(&mut self, e: Emit) -> Result<(), Fault> {
        collect(&mut self.results, e)
    }

    fn pass(&mut self, at: &State, reads: &mut ReadSet) -> bool {
        let j = self.before + self.fresh.len();
        if j >= MAX_MARKS {
            // No mark here: the segment goes on.
            return true;
        }
        if let Some((old, clean_from, udf)) = self.earlier
            && j >= clean_from
            && let Some(m) = old.get(j)
            && udf.live_at(at).is_some_and(|live| at.same_course(&m.at, live))
        {
            *self.segment() = mem::take(reads);
            self.met = Some(j);
            return false;
        }
        if self.fresh.try_reserve(1).is_err() {
            return true;
        }
        *self.segment() = mem::take(reads);
        self.fresh.push(Mark { at: *at, emitted: self.results.len(), reads: ReadSet::default() });
        true
    }
}

impl Template {
    /// `owns` over `block` ([`owns`](Template::owns)), and the run kept
    /// for [`owns_again`](Template::owns_again).
    pub(crate) fn owns_run(
        &self,
        block: &[u8; BLOCK_SIZE],
        nblocks: u64,
        types: u32,
    ) -> Result<(Owned, OwnsRun), OwnsError> {
        let mut rec = Recorder::new(Vec::new(), 1, None);
        let mut reads = ReadSet::default();
        let mut at = State::START;
        self.owns.go(block, &mut at, &mut rec, &mut reads).map_err(OwnsError::Fault)?;
        *rec.segment() = reads;
        let mut marks = Vec::new();
        marks.try_reserve_exact(1 + rec.fresh.len()).map_err(|_| OwnsError::Fault(Fault::NoMemory))?;
        marks.push(Mark { at: State::START, emitted: 0, reads: rec.start_reads });
        marks.append(&mut rec.fresh);
        let mut run = OwnsRun { results: rec.results, marks, reads: ReadSet::default() };
        for m in &run.marks {
            run.reads.add(&m.reads);
        }
        Ok((finish(&run.results, nblocks, types)?, run))
    }

    /// `owns` over `new`, given `run`, this template's run over `old`; `run`
    /// becomes the run over `new`. The result is what
    /// [`owns`](Template::owns) over `new` says, or `None` when `old` and
    /// `new` agree on every word the run read (the result over `old`
    /// stands; `run` holds for both); with it, the mark of the old run the
    /// new one met, if it met one. On an error `run` is left as it was.
    pub(crate) fn owns_again(
        &self,
        run: &mut OwnsRun,
        old: &[u8; BLOCK_SIZE],
        new: &[u8; BLOCK_SIZE],
        nblocks: u64,
        types: u32,
    ) -> Result<(Option<Owned>, Option<usize>), OwnsError> {
        let no_memory = OwnsError::Fault(Fault::NoMemory);
        // The first segment that read a changed word, and the last: the
        // run goes again from the one and may meet the old run only after
        // the other. A change touches a word or two.
        let (mut k, mut last) = (usize::MAX, 0);
        for w in run.reads.differing(old, new).words() {
            let reads = |m: &Mark| m.reads.has(w);
            k = k.min(run.marks.iter().position(reads).unwrap_or(usize::MAX));
            last = last.max(run.marks.iter().rposition(reads).unwrap_or(0));
        }
        if k == usize::MAX {
            return Ok((None, None));
        }
        let clean_from = last + 1;
        let from = &run.marks[k];
        let mut results = Vec::new();
        results.try_reserve(run.results.len()).map_err(|_| no_memory)?;
        results.extend_from_slice(run.results.get(..from.emitted).unwrap_or(&[]));
        let mut rec = Recorder::new(results, k + 1, Some((&run.marks, clean_from, &self.owns)));
        let mut reads = ReadSet::default();
        let mut at = from.at;
        let ended = self.owns.go(new, &mut at, &mut rec, &mut reads).map_err(OwnsError::Fault)?;
        if ended {
            *rec.segment() = reads;
        }
        let Recorder { mut results, fresh, start_reads, met, .. } = rec;
        // The marks after `k`: the new run's, then (when it met the old
        // run at mark `j`) the old run's from `j`, their counts moved.
        let (tail, moved) = match met {
            Some(j) => {
                let old_at = run.marks[j].emitted;
                let rest = run.results.get(old_at..).unwrap_or(&[]);
                if results.len() + rest.len() > MAX_EXTENTS {
                    return Err(OwnsError::Fault(Fault::TooManyResults));
                }
                results.try_reserve(rest.len()).map_err(|_| no_memory)?;
                // The old run's later marks count this many more (or,
                // wrapping, fewer) results before them.
                let shift = results.len().wrapping_sub(old_at);
                results.extend_from_slice(rest);
                (j, shift)
            }
            None => (run.marks.len(), 0),
        };
        let owned = finish(&results, nblocks, types)?;
        // Only now is `run` changed (nothing below can fail but the one
        // reservation, taken first).
        let removed = tail - (k + 1);
        if fresh.len() > removed {
            run.marks.try_reserve(fresh.len() - removed).map_err(|_| no_memory)?;
        }
        run.reads.add(&start_reads);
        for m in &fresh {
            run.reads.add(&m.reads);
        }
        run.marks[k].reads = start_reads;
        let (at, added) = (k + 1, fresh.len());
        for m in run.marks.get_mut(tail..).unwrap_or(&mut []) {
            m.emitted = m.emitted.wrapping_add(moved);
        }
        if added <= removed {
            run.marks.drain(at + added..tail);
            for (slot, m) in run.marks[at..at + added].iter_mut().zip(fresh) {
                *slot = m;
            }
        } else {
            let mut fresh = fresh.into_iter();
            for slot in &mut run.marks[at..tail] {
                if let Some(m) = fresh.next() {
                    *slot = m;
                }
            }
            // The rest at the end, then turned to their place before the
            // old run's tail.
            run.marks.extend(fresh);
            run.marks[tail..].rotate_right(added - removed);
        }
        run.results = results;
        Ok((Some(owned), met))
    }
}

/// Adds `e` to `results` if it is an extent: a run emits at most
/// [`MAX_EXTENTS`] (one more is `TooManyResults`).
pub(crate) fn collect(results: &mut Vec<Raw>, e: Emit) -> Result<(), Fault> {
    let Emit::Extent { start, len, ty } = e else { return Ok(()) };
    if results.len() == MAX_EXTENTS {
        return Err(Fault::TooManyResults);
    }
    results.try_reserve(1).map_err(|_| Fault::NoMemory)?;
    results.push(Raw { start, len, ty });
    Ok(())
}

/// The owned set of `results`, checked as a run's results are: a type
/// past 32 bits is refused at the first such extent, then the set's own
/// checks ([`Owned::new`]).
pub(crate) fn finish(results: &[Raw], nblocks: u64, types: u32) -> Result<Owned, OwnsError> {
    if let Some(bad) = results.iter().find(|r| u32::try_from(r.ty).is_err()) {
        return Err(OwnsError::Set(SetError::BadType(bad.start)));
    }
    let mut out = Vec::new();
    out.try_reserve_exact(results.len()).map_err(|_| OwnsError::Fault(Fault::NoMemory))?;
    out.extend(results.iter().map(|r| Extent::new(r.start, r.len, r.ty as u32)));
    Owned::new(out, nblocks, types).map_err(OwnsError::Set)
}

#[cfg(test)]
#[path = "rerun_tests.rs"]
mod tests;
