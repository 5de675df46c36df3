//! The files an `OPEN` with [`flags::AHEAD`](crate::flags::AHEAD) opened
//! along, as the server lays them out in the caller's buffer after the
//! opened file's own bytes (from [`start`] of its length on), one record
//! after another:
//!
//! | bytes | what |
//! | --- | --- |
//! | 0..40 | the caller's handle, the kind ([`KIND_FILE`](crate::KIND_FILE)), the inode number, the file's length, the name's length: five little-endian words ([`Head`]) |
//! | 40.. | the name (one component), then zeros to a multiple of 8 |
//! | then | the file's bytes, then zeros to a multiple of 8 |
//!
//! The client reads every length from the buffer, which the server can
//! write at any time, so [`Head::parse`] and [`Head::span`] check each
//! against what is left of the buffer before anything is used.

/// Bytes of a record's head.
pub const HEAD: usize = 40;

/// Longest name a record carries (as a directory entry's).
pub const NAME_MAX: usize = 255;

/// Where the first record starts after the opened file's `len` bytes.
pub const fn start(len: usize) -> usize {
    pad(len)
}

/// `n` rounded up to a multiple of 8.
pub const fn pad(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// A record's head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// The caller's handle on the file.
    pub handle: u64,
    /// `KIND_*`.
    pub kind: u64,
    /// The inode number shown to programs.
    pub number: u64,
    /// The file's length: all of its bytes follow the name.
    pub len: u64,
    /// The name's length.
    pub name_len: u64,
}

impl Head {
    /// The head's bytes.
    pub fn bytes(&self) -> [u8; HEAD] {
        let mut b = [0u8; HEAD];
        let words = [self.handle, self.kind, self.number, self.len, self.name_len];
        for (chunk, w) in b.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    /// The head in `b`.
    pub fn parse(b: &[u8; HEAD]) -> Head {
        let w = |i: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[i * 8..i * 8 + 8]);
            u64::from_le_bytes(x)
        };
        Head { handle: w(0), kind: w(1), number: w(2), len: w(3), name_len: w(4) }
    }

    /// For a record starting at `at` in a buffer of `size` bytes: where its
    /// name starts, where its bytes start, and where the next record
    /// starts; `None` if the name is empty or longer than [`NAME_MAX`] or
    /// the record does not fit.
    pub fn span(&self, at: usize, size: usize) -> Option<(usize, usize, usize)> {
        let name_len = usize::try_from(self.name_len).ok().filter(|&n| (1..=NAME_MAX).contains(&n))?;
        let len = usize::try_from(self.len).ok()?;
        let name = at.checked_add(HEAD)?;
        let bytes = name.checked_add(pad(name_len))?;
        let end = bytes.checked_add(len)?;
        (end <= size).then_some((name, bytes, pad(end).min(size)))
    }

    /// The bytes a record of a `name_len`-byte name and a `len`-byte file
    /// takes.
    pub const fn record_len(name_len: usize, len: usize) -> usize {
        HEAD + pad(name_len) + pad(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_reads_back_as_written() {
        let h = Head { handle: 7, kind: crate::KIND_FILE, number: 99, len: 1024, name_len: 6 };
        assert_eq!(Head::parse(&h.bytes()), h);
    }

    #[test]
    fn spans_are_checked_against_the_buffer() {
        let h = Head { handle: 1, kind: 1, number: 2, len: 10, name_len: 3 };
        assert_eq!(h.span(8, 100), Some((48, 56, 72)));
        assert_eq!(Head::record_len(3, 10), 64);
        assert_eq!(h.span(8, 66), Some((48, 56, 66)), "the last record may end unpadded at the buffer's end");
        assert_eq!(h.span(8, 65), None, "its bytes past the end");
        assert_eq!(Head { name_len: 0, ..h }.span(0, 100), None, "no name");
        assert_eq!(Head { name_len: 256, ..h }.span(0, 10_000), None, "a name too long");
        assert_eq!(Head { len: u64::MAX, ..h }.span(0, usize::MAX), None, "lengths that overflow");
        assert_eq!(h.span(usize::MAX - 8, usize::MAX), None);
    }

    #[test]
    fn records_start_after_the_opened_files_bytes_on_a_word() {
        assert_eq!((start(0), start(1), start(8), start(1001)), (0, 8, 8, 1008));
    }
}
