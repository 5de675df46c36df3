//! The neighbour table's page: 512 words, written by one program and read
//! by many, with a sequence lock (the version is odd while a change is
//! being written).
//!
//! | words | content |
//! |---|---|
//! | 0 | [`MAGIC`] |
//! | 1 | version: even when stable, odd while the writer changes entries |
//! | 2 | entries in use (at most [`CAPACITY`]) |
//! | 3 | the next entry to replace when the table is full |
//! | 4 + 2i | entry i: IPv4 address (big-endian, low 32 bits) |
//! | 5 + 2i | entry i: Ethernet address (low 48 bits, first byte lowest) |

use crate::{Ip, Mac};
use core::sync::atomic::{AtomicU64, Ordering};

/// Words in the page.
pub const WORDS: usize = 512;
/// Word 0: "OXKNEIGH".
pub const MAGIC: u64 = u64::from_be_bytes(*b"OXKNEIGH");
const VERSION: usize = 1;
const COUNT: usize = 2;
const NEXT: usize = 3;
const FIRST: usize = 4;
/// Entries the page holds.
pub const CAPACITY: usize = (WORDS - FIRST) / 2;
/// Reads a reader tries before it gives up on a table being rewritten.
pub const READ_TRIES: usize = 8;

fn ip_word(ip: Ip) -> u64 {
    u64::from(u32::from_be_bytes(ip))
}

fn mac_word(mac: Mac) -> u64 {
    let mut w = [0u8; 8];
    w[..6].copy_from_slice(&mac);
    u64::from_le_bytes(w)
}

fn word_mac(w: u64) -> Mac {
    let b = w.to_le_bytes();
    [b[0], b[1], b[2], b[3], b[4], b[5]]
}

/// True for an address a neighbour can have: not zero, not multicast or
/// broadcast.
pub fn unicast(mac: Mac) -> bool {
    mac != [0; 6] && mac[0] & 1 == 0
}

/// The writer's side: the page, which only it changes.
pub struct Writer<'a> {
    words: &'a [AtomicU64],
}

impl<'a> Writer<'a> {
    /// Formats `words` (at least [`WORDS`]) as an empty table.
    pub fn format(words: &'a [AtomicU64]) -> Option<Writer<'a>> {
        let words = words.get(..WORDS)?;
        for w in words {
            w.store(0, Ordering::Relaxed);
        }
        words[0].store(MAGIC, Ordering::Release);
        Some(Writer { words })
    }

    /// Entries in use.
    pub fn len(&self) -> usize {
        (self.words[COUNT].load(Ordering::Relaxed) as usize).min(CAPACITY)
    }

    /// True with no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records that `ip` is at `mac`: the entry for `ip` changes, or a new
    /// one is added (replacing the oldest added when the table is full).
    /// Nothing is written for an unchanged entry or an address no
    /// neighbour can have. True if the table changed.
    pub fn learn(&self, ip: Ip, mac: Mac) -> bool {
        if !unicast(mac) || ip == [0; 4] {
            return false;
        }
        let (ipw, macw) = (ip_word(ip), mac_word(mac));
        let n = self.len();
        let at = (0..n).find(|&i| self.words[FIRST + 2 * i].load(Ordering::Relaxed) == ipw);
        if let Some(i) = at
            && self.words[FIRST + 2 * i + 1].load(Ordering::Relaxed) == macw
        {
            return false;
        }
        let v = self.words[VERSION].load(Ordering::Relaxed);
        self.words[VERSION].store(v.wrapping_add(1), Ordering::Release);
        let i = match at {
            Some(i) => i,
            None if n < CAPACITY => {
                self.words[COUNT].store(n as u64 + 1, Ordering::Relaxed);
                n
            }
            None => {
                let i = self.words[NEXT].load(Ordering::Relaxed) as usize % CAPACITY;
                self.words[NEXT].store(((i + 1) % CAPACITY) as u64, Ordering::Relaxed);
                i
            }
        };
        self.words[FIRST + 2 * i].store(ipw, Ordering::Relaxed);
        self.words[FIRST + 2 * i + 1].store(macw, Ordering::Relaxed);
        self.words[VERSION].store(v.wrapping_add(2), Ordering::Release);
        true
    }
}

/// What a reader found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The address's neighbour.
    At(Mac),
    /// No entry (or none a neighbour can have).
    Unknown,
    /// Not a table (wrong magic, too short).
    NotATable,
    /// Rewritten under every one of [`READ_TRIES`] reads.
    Busy,
}

/// Looks `ip` up in the table `words` (a read-only mapping of the page).
pub fn lookup(words: &[AtomicU64], ip: Ip) -> Answer {
    let Some(words) = words.get(..WORDS) else { return Answer::NotATable };
    if words[0].load(Ordering::Acquire) != MAGIC {
        return Answer::NotATable;
    }
    let ipw = ip_word(ip);
    for _ in 0..READ_TRIES {
        let v = words[VERSION].load(Ordering::Acquire);
        if v & 1 == 1 {
            core::hint::spin_loop();
            continue;
        }
        let n = (words[COUNT].load(Ordering::Relaxed) as usize).min(CAPACITY);
        let found = (0..n)
            .find(|&i| words[FIRST + 2 * i].load(Ordering::Relaxed) == ipw)
            .map(|i| word_mac(words[FIRST + 2 * i + 1].load(Ordering::Relaxed)));
        core::sync::atomic::fence(Ordering::Acquire);
        if words[VERSION].load(Ordering::Relaxed) != v {
            continue;
        }
        return match found {
            Some(mac) if unicast(mac) => Answer::At(mac),
            _ => Answer::Unknown,
        };
    }
    Answer::Busy
}
