//! Environment ids, encoded and decoded here and nowhere else.
//!
//! An environment id is a `u32`: the environment table row in the low
//! [`ROW_BITS`] bits and the row's generation above them
//! (`generation << ROW_BITS | row`). Generations start at 1, so every id is
//! at least `frames::OWNER_FIRST_ENV`, and a row's next environment gets a
//! new id (stale capabilities and ids stop matching). The capability name
//! of an environment carries the same two numbers as separate components
//! (`[2, row, generation]`); [`from_parts`] puts them back together.

use crate::layout::ENV_TABLE_ROWS;
use core::num::NonZeroU32;

/// Bits of the row in an id.
pub const ROW_BITS: u32 = 10;
/// Highest generation a row may reach (the id's other 22 bits).
pub const MAX_GENERATION: u32 = (1 << (32 - ROW_BITS)) - 1;

const _: () = assert!(1 << ROW_BITS == ENV_TABLE_ROWS);

/// The id of `generation` of `row`, for parts known to be in range (a
/// row below `ENV_TABLE_ROWS`, a generation at most [`MAX_GENERATION`]);
/// out-of-range bits are dropped. [`make`] checks instead.
pub const fn encode(generation: u32, row: usize) -> u32 {
    (generation << ROW_BITS) | (row & (ENV_TABLE_ROWS - 1)) as u32
}

/// The id of `generation` of `row`; `None` when either is out of range.
pub const fn make(generation: u32, row: usize) -> Option<u32> {
    if row >= ENV_TABLE_ROWS || generation > MAX_GENERATION {
        return None;
    }
    Some(encode(generation, row))
}

/// The id named by a capability's `row` and `generation` components;
/// `None` when either is out of range (no capability the kernel made).
pub const fn from_parts(row: u64, generation: u64) -> Option<u32> {
    if row >= ENV_TABLE_ROWS as u64 || generation > MAX_GENERATION as u64 {
        return None;
    }
    make(generation as u32, row as usize)
}

/// The environment-table row of an id (also the index of its run-statistics
/// row). Works on any `u64`: only the low bits count.
pub const fn row(id: u64) -> usize {
    (id as usize) & (ENV_TABLE_ROWS - 1)
}

/// The generation of an id.
pub const fn generation(id: u32) -> u32 {
    id >> ROW_BITS
}

/// An environment id as a type of its own, made only by this module's
/// codec (from a row and a generation, or decoded from a word a program
/// passed), so that it cannot be mistaken for a row, a slot or a count.
/// Its number ([`EnvId::raw`]) is what exposed tables, frame owners and
/// logs show.
///
/// It is never 0 (every generation is at least 1), so `Option<EnvId>`
/// takes no more room than an id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct EnvId(NonZeroU32);

/// The id numbered `raw`, known to have a generation of at least 1.
const fn nonzero(raw: u32) -> EnvId {
    match NonZeroU32::new(raw) {
        Some(n) => EnvId(n),
        // Unreachable for a generation ≥ 1; the least id if not.
        None => EnvId(NonZeroU32::MIN),
    }
}

impl EnvId {
    /// The id of `generation` of `row`, for parts known to be in range
    /// (see [`encode`]; generations start at 1, and 0 is taken as 1).
    #[inline]
    pub const fn of(generation: u32, row: usize) -> EnvId {
        nonzero(encode(if generation == 0 { 1 } else { generation }, row))
    }

    /// The id named by a capability's `row` and `generation` components
    /// (see [`from_parts`]).
    #[inline]
    pub const fn from_parts(row: u64, generation: u64) -> Option<EnvId> {
        match from_parts(row, generation) {
            Some(id) => EnvId::decode(id as u64),
            None => None,
        }
    }

    /// The id a program's word names: a 32-bit number whose generation is
    /// at least 1; `None` for 0 (no environment) and anything else that
    /// no environment ever had. Whether it names one alive is the table's
    /// business.
    #[inline]
    pub const fn decode(word: u64) -> Option<EnvId> {
        if word > u32::MAX as u64 || generation(word as u32) == 0 {
            return None;
        }
        Some(nonzero(word as u32))
    }

    /// Its environment-table row.
    #[inline]
    pub const fn row(self) -> usize {
        row(self.0.get() as u64)
    }

    /// Its generation.
    #[inline]
    pub const fn generation(self) -> u32 {
        generation(self.0.get())
    }

    /// Its number, as exposed tables and frame owners hold it.
    #[inline]
    pub const fn raw(self) -> u32 {
        self.0.get()
    }

    /// Its number as a register word.
    #[inline]
    pub const fn word(self) -> u64 {
        self.0.get() as u64
    }
}

impl core::fmt::Display for EnvId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.fmt(f)
    }
}

impl From<EnvId> for u64 {
    #[inline]
    fn from(id: EnvId) -> u64 {
        id.word()
    }
}

impl From<EnvId> for u32 {
    #[inline]
    fn from(id: EnvId) -> u32 {
        id.raw()
    }
}
