//! A program of the boot archive as `cargo xtask icount` names its
//! addresses: its function symbols and the bytes its loadable segments
//! bring from the file, so that a block of code can be told apart from
//! another program's at the same address (a native program and a Linux
//! program are both linked near 0x400000).

use crate::profile::symbols::{Symbol, Table};

/// One program: its symbols, its segments' file bytes, and whether a
/// Linux toolchain made it.
pub(crate) struct Image {
    pub table: Table,
    /// `(address, bytes)` of each loadable segment's file part.
    segments: Vec<(u64, Vec<u8>)>,
    /// Made by a Linux toolchain (run by the personality), not an Oxok program.
    pub linux: bool,
}

/// Where user programs may lie (the lower half).
const USER_LIMIT: u64 = 1 << 47;

impl Image {
    /// Reads `elf`'s symbols and, for an executable at fixed addresses, its
    /// segments (a position-independent one's load address is not known
    /// here: every block then matches it).
    pub(crate) fn from_elf(elf: &[u8]) -> Result<Image, String> {
        let table = Table::from_elf(elf)?;
        let parsed = oxok_elf::Elf::parse(elf, USER_LIMIT).ok();
        let segments = parsed.map_or_else(Vec::new, |e| e.segments().map(|s| (s.vaddr, s.data.to_vec())).collect());
        Ok(Image { table, segments, linux: parsed.is_some_and(|e| e.linux_abi()) })
    }

    /// An image of `syms` whose code at `addr` is `bytes` (tests).
    #[cfg(test)]
    pub(crate) fn of(syms: &[(u64, u64, &str)], addr: u64, bytes: &[u8], linux: bool) -> Image {
        Image { table: Table::of(syms), segments: vec![(addr, bytes.to_vec())], linux }
    }

    /// Whether this image's bytes at `addr` begin as the plugin's signature
    /// `sig` says (its first bytes, up to seven, their number in the top
    /// byte). A signature of no bytes, or an image without segments,
    /// matches anything.
    pub(crate) fn holds(&self, addr: u64, sig: u64) -> bool {
        let len = (sig >> 56) as usize;
        if len == 0 || self.segments.is_empty() {
            return true;
        }
        let want = &sig.to_le_bytes()[..len.min(7)];
        self.segments.iter().any(|(at, data)| {
            addr.checked_sub(*at)
                .and_then(|off| usize::try_from(off).ok())
                .and_then(|off| data.get(off..off.checked_add(want.len())?))
                .is_some_and(|have| have == want)
        })
    }

    /// The symbol at `addr` if this image's bytes there match `sig`.
    pub(crate) fn symbol(&self, addr: u64, sig: u64) -> Option<&Symbol> {
        self.table.lookup(addr).filter(|_| self.holds(addr, sig))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(bytes: &[u8]) -> u64 {
        let mut s = [0u8; 8];
        s[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(s) | (bytes.len() as u64) << 56
    }

    #[test]
    fn a_block_is_the_image_whose_bytes_it_begins_with() {
        let a = Image::of(&[(0x401000, 0x10, "a")], 0x401000, &[0x55, 0x48, 0x89, 0xe5, 0x90], false);
        let b = Image::of(&[(0x401000, 0x10, "b")], 0x401000, &[0xf3, 0x0f, 0x1e, 0xfa, 0x90], true);
        assert!(a.holds(0x401000, sig(&[0x55, 0x48, 0x89])));
        assert!(!b.holds(0x401000, sig(&[0x55, 0x48, 0x89])));
        assert!(b.holds(0x401001, sig(&[0x0f, 0x1e])));
        assert_eq!(b.symbol(0x401000, sig(&[0xf3])).map(|s| s.name.as_str()), Some("b"));
        assert!(a.symbol(0x401000, sig(&[0xf3])).is_none());
        // Past the segment's bytes, or before them: no match.
        assert!(!a.holds(0x401003, sig(&[0xe5, 0x90, 0x00])));
        assert!(!a.holds(0x400fff, sig(&[0x00])));
        // No signature: anything matches.
        assert!(a.holds(0x401000, 0) && b.holds(0x9999, 0));
    }
}
