//! The kernel's sleeper queue: who is asleep on a wakeup predicate, kept so
//! that a timer tick never has to evaluate every sleeper.
//!
//! Sleepers come in two kinds, told apart by the kernel when one goes to
//! sleep:
//!
//! - **Deadline sleepers**: every predicate the sleeper waits on is "the
//!   clock's tick counter ≥ t" (`oxok_pred::Program::deadline`), so it
//!   holds exactly from the tick `min t` on and nothing else can make it
//!   true. They sit in a binary min-heap keyed by that tick; a tick pops
//!   only those whose deadline has come ([`SleepQueue::pop_due`]), each in
//!   O(log n).
//! - **Watchers**: any other predicate (a word of shared memory, a table
//!   row, the console's input counter). They sit in a list walked round
//!   robin: each tick evaluates at most a budget of them
//!   ([`SleepQueue::next_watch`]) and the next tick continues where this
//!   one stopped, so n watchers cost at most the budget per tick and each
//!   is seen at least every `ceil(n / budget)` ticks. Events that change
//!   what watchers read (an environment ending) may walk all of them once.
//!   A watcher is listed with whether a device's work can change what it
//!   reads ([`SleepQueue::insert_watcher`]); a device interrupt's walk
//!   passes over those it cannot concern without evaluating them
//!   ([`SleepQueue::next_watch_flagged`]).
//!
//! Each sleeper is in the queue **at most once**, in one of the two: a
//! sleeper is listed under its environment-table row with its id
//! ([`EnvId`]), and [`SleepQueue::insert`] of a row already present
//! replaces its entry. All memory is taken once in
//! [`SleepQueue::new`] (one entry per row): no operation allocates, none
//! can fail for lack of memory, and no operation panics on any input.
#![no_std]

extern crate alloc;

use alloc::vec::Vec;
use oxok_abi::EnvEntry;
use oxok_abi::env_id::EnvId;
use oxok_abi::layout::{CLOCK, ENV_TABLE, ENV_TABLE_ROWS, PAGE_SIZE};

/// Whether a predicate's read of `bytes` at `addr` lies in what no device's
/// work changes — the exposed environment table and the clock page (a
/// parent waiting on its child's row, perhaps with a deadline) — so a
/// watcher that reads only such words need not be evaluated at a device's
/// interrupt. User memory, the network and disk tables and the system
/// page's console counter all may change when a device interrupts.
pub fn untouched_by_devices(addr: u64, bytes: u8) -> bool {
    let Some(end) = addr.checked_add(u64::from(bytes)) else { return false };
    let within = |base: u64, len: u64| addr >= base && end <= base + len;
    within(ENV_TABLE, (ENV_TABLE_ROWS * size_of::<EnvEntry>()) as u64) || within(CLOCK, PAGE_SIZE)
}

/// "Not here" in the position tables.
const NONE: u32 = u32::MAX;

/// Where a row's sleeper is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Absent,
    /// At this index of the heap.
    Heap(usize),
    /// At this index of the watch list.
    Watch(usize),
}

/// A listed sleeper: its environment-table row and its id, and (a watcher)
/// whether a device's work can change what it reads.
#[derive(Clone, Copy, Debug)]
struct Sleeper {
    row: u32,
    id: EnvId,
    devices: bool,
}

/// The queue (see the crate documentation).
pub struct SleepQueue {
    /// `(deadline, sleeper)`, a binary min-heap on the deadline.
    heap: Vec<(u64, Sleeper)>,
    /// The watchers, walked round robin from `cursor`.
    watch: Vec<Sleeper>,
    /// Per row: the index of its sleeper in `heap` or `watch`.
    heap_at: Vec<u32>,
    watch_at: Vec<u32>,
    cursor: usize,
}

impl SleepQueue {
    /// An empty queue for rows `0..rows` (all memory taken now).
    pub fn new(rows: usize) -> SleepQueue {
        SleepQueue {
            heap: Vec::with_capacity(rows),
            watch: Vec::with_capacity(rows),
            heap_at: alloc::vec![NONE; rows],
            watch_at: alloc::vec![NONE; rows],
            cursor: 0,
        }
    }

    /// Sleepers listed (both kinds).
    pub fn len(&self) -> usize {
        self.heap.len() + self.watch.len()
    }

    /// True if nobody is listed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Watchers listed.
    pub fn watchers(&self) -> usize {
        self.watch.len()
    }

    /// The earliest deadline listed.
    pub fn next_deadline(&self) -> Option<u64> {
        self.heap.first().map(|&(d, _)| d)
    }

    /// The sleeper listed at `row`, if any.
    fn sleeper(&self, row: usize) -> Option<Sleeper> {
        match self.place(row) {
            Place::Absent => None,
            Place::Heap(at) => self.heap.get(at).map(|&(_, s)| s),
            Place::Watch(at) => self.watch.get(at).copied(),
        }
    }

    fn place(&self, row: usize) -> Place {
        match (self.heap_at.get(row), self.watch_at.get(row)) {
            (Some(&h), _) if h != NONE => Place::Heap(h as usize),
            (_, Some(&w)) if w != NONE => Place::Watch(w as usize),
            _ => Place::Absent,
        }
    }

    /// The id listed at `row`, if any.
    pub fn listed(&self, row: usize) -> Option<EnvId> {
        self.sleeper(row).map(|s| s.id)
    }

    /// Lists `id` at `row`: in the heap under `deadline`, or as a watcher
    /// any event may concern with `None`. Replaces whatever `row` had (a
    /// sleeper is never listed twice). False (nothing changed) if `row` is
    /// out of range.
    pub fn insert(&mut self, row: usize, id: EnvId, deadline: Option<u64>) -> bool {
        self.list(row, Sleeper { row: row as u32, id, devices: true }, deadline)
    }

    /// Lists `id` at `row` as a watcher, `devices` saying whether a
    /// device's work can change what it reads (false: a device interrupt's
    /// walk passes over it). As [`insert`](SleepQueue::insert) otherwise.
    pub fn insert_watcher(&mut self, row: usize, id: EnvId, devices: bool) -> bool {
        self.list(row, Sleeper { row: row as u32, id, devices }, None)
    }

    fn list(&mut self, row: usize, sleeper: Sleeper, deadline: Option<u64>) -> bool {
        if row >= self.heap_at.len() {
            return false;
        }
        self.remove(row);
        match deadline {
            Some(d) => {
                let at = self.heap.len();
                if self.heap.len() == self.heap.capacity() {
                    return false; // cannot happen: one entry per row at most
                }
                self.heap.push((d, sleeper));
                self.heap_at[row] = at as u32;
                self.sift_up(at);
            }
            None => {
                if self.watch.len() == self.watch.capacity() {
                    return false;
                }
                self.watch_at[row] = self.watch.len() as u32;
                self.watch.push(sleeper);
            }
        }
        true
    }

    /// Takes `row` out of the queue; returns the id it held.
    pub fn remove(&mut self, row: usize) -> Option<EnvId> {
        let id = self.sleeper(row)?.id;
        match self.place(row) {
            Place::Absent => None,
            Place::Heap(at) => {
                self.heap_remove(at);
                Some(id)
            }
            Place::Watch(mut at) => {
                // Entries before the cursor were seen this round, the rest
                // not yet: keep it so. A hole among the seen ones is filled
                // with the last seen one, and the cursor steps back over the
                // hole, which then sits among the unseen.
                if at < self.cursor {
                    let seen = self.cursor - 1;
                    self.watch_swap(at, seen);
                    at = seen;
                    self.cursor = seen;
                }
                let last = self.watch.len().checked_sub(1)?;
                self.watch_swap(at, last);
                self.watch.pop();
                self.watch_at[row] = NONE;
                Some(id)
            }
        }
    }

    /// Takes out and returns `(row, id)` of a deadline sleeper whose
    /// deadline is at or before `now`, earliest first; `None` when no
    /// deadline has come.
    pub fn pop_due(&mut self, now: u64) -> Option<(usize, EnvId)> {
        let &(d, s) = self.heap.first()?;
        if d > now {
            return None;
        }
        self.heap_remove(0);
        Some((s.row as usize, s.id))
    }

    /// The next watcher of the round-robin walk, `(row, id)`, left listed
    /// (the caller removes it if it wakes). `None` if there are none.
    pub fn next_watch(&mut self) -> Option<(usize, EnvId)> {
        self.next_watch_flagged().map(|(row, id, _)| (row, id))
    }

    /// As [`next_watch`](SleepQueue::next_watch), with whether a device's
    /// work can change what the watcher reads.
    pub fn next_watch_flagged(&mut self) -> Option<(usize, EnvId, bool)> {
        if self.watch.is_empty() {
            return None;
        }
        if self.cursor >= self.watch.len() {
            self.cursor = 0;
        }
        let s = self.watch[self.cursor];
        self.cursor += 1;
        Some((s.row as usize, s.id, s.devices))
    }

    /// Every watcher now listed, `(row, id)`, into `out` (cleared first;
    /// its capacity is kept: give it one entry per row and it never
    /// grows). For events that may wake any of them.
    pub fn watchers_into(&self, out: &mut Vec<(usize, EnvId)>) {
        out.clear();
        for s in &self.watch {
            if out.len() < out.capacity() {
                out.push((s.row as usize, s.id));
            }
        }
    }

    fn watch_swap(&mut self, a: usize, b: usize) {
        self.watch.swap(a, b);
        self.watch_at[self.watch[a].row as usize] = a as u32;
        self.watch_at[self.watch[b].row as usize] = b as u32;
    }

    fn heap_remove(&mut self, at: usize) {
        let Some(last) = self.heap.len().checked_sub(1) else { return };
        let Some(&(_, s)) = self.heap.get(at) else { return };
        self.heap_at[s.row as usize] = NONE;
        self.heap.swap(at, last);
        self.heap.pop();
        if at < self.heap.len() {
            let moved = self.heap[at].1.row as usize;
            self.heap_at[moved] = at as u32;
            self.sift_down(at);
            self.sift_up(at);
        }
    }

    fn swap_entries(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.heap_at[self.heap[a].1.row as usize] = a as u32;
        self.heap_at[self.heap[b].1.row as usize] = b as u32;
    }

    fn sift_up(&mut self, mut at: usize) {
        while at > 0 {
            let parent = (at - 1) / 2;
            if self.heap[parent].0 <= self.heap[at].0 {
                break;
            }
            self.swap_entries(parent, at);
            at = parent;
        }
    }

    fn sift_down(&mut self, mut at: usize) {
        loop {
            let (l, r) = (2 * at + 1, 2 * at + 2);
            let mut least = at;
            if l < self.heap.len() && self.heap[l].0 < self.heap[least].0 {
                least = l;
            }
            if r < self.heap.len() && self.heap[r].0 < self.heap[least].0 {
                least = r;
            }
            if least == at {
                return;
            }
            self.swap_entries(least, at);
            at = least;
        }
    }
}

#[cfg(test)]
mod tests;
