//! Function symbols from ELF64 symbol tables (`.symtab`), demangled, and
//! lookup by address.

/// One symbol: where it starts, how long it is (0: unknown), its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Symbol {
    pub addr: u64,
    pub size: u64,
    pub name: String,
}

/// The symbols of one image, sorted by address.
#[derive(Debug, Clone, Default)]
pub(crate) struct Table {
    syms: Vec<Symbol>,
}

/// The kernel's symbols (from `kernel.elf` at `kernel`) and the boot
/// archive's bytes (`initrd`): what every tool that names guest addresses
/// starts from.
pub(crate) fn boot_files(kernel: &std::path::Path, initrd: &std::path::Path) -> Result<(Table, Vec<u8>), String> {
    let read = |p: &std::path::Path| std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
    let table = Table::from_elf(&read(kernel)?).map_err(|e| format!("kernel.elf: {e}"))?;
    Ok((table, read(initrd)?))
}

const SHT_SYMTAB: u32 = 2;
const STT_NOTYPE: u8 = 0;
const STT_FUNC: u8 = 2;

pub(crate) fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
pub(crate) fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// A Rust name demangled without its hash; other names as they are.
pub(crate) fn demangle(name: &str) -> String {
    format!("{:#}", rustc_demangle::demangle(name))
}

impl Table {
    /// Reads the function (and untyped code label) symbols of an ELF64 file.
    pub(crate) fn from_elf(elf: &[u8]) -> Result<Table, String> {
        if elf.get(..5) != Some(b"\x7fELF\x02") {
            return Err("not an ELF64 file".into());
        }
        let bad = || "truncated or malformed ELF section headers".to_string();
        let shoff = u64_at(elf, 0x28).ok_or_else(bad)? as usize;
        let shentsize = u16_at(elf, 0x3a).ok_or_else(bad)? as usize;
        let shnum = u16_at(elf, 0x3c).ok_or_else(bad)? as usize;
        let section = |i: usize| -> Option<(u32, usize, usize, u32)> {
            let h = shoff.checked_add(i.checked_mul(shentsize)?)?;
            let (ty, off, size, link) =
                (u32_at(elf, h + 4)?, u64_at(elf, h + 0x18)?, u64_at(elf, h + 0x20)?, u32_at(elf, h + 0x28)?);
            Some((ty, off as usize, size as usize, link))
        };
        let mut syms = Vec::new();
        for i in 0..shnum {
            let (ty, off, size, link) = section(i).ok_or_else(bad)?;
            if ty != SHT_SYMTAB {
                continue;
            }
            let (_, str_off, str_size, _) = section(link as usize).ok_or_else(bad)?;
            let strtab = elf.get(str_off..str_off.saturating_add(str_size)).ok_or_else(bad)?;
            let data = elf.get(off..off.saturating_add(size)).ok_or_else(bad)?;
            for s in data.chunks_exact(24) {
                let kind = s[4] & 0xf;
                let shndx = u16_at(s, 6).unwrap_or(0);
                let addr = u64_at(s, 8).unwrap_or(0);
                if !(kind == STT_FUNC || kind == STT_NOTYPE) || shndx == 0 || addr == 0 {
                    continue;
                }
                let start = u32_at(s, 0).unwrap_or(0) as usize;
                let raw = strtab.get(start..).and_then(|t| t.split(|&b| b == 0).next()).unwrap_or(b"");
                let raw = String::from_utf8_lossy(raw);
                if raw.is_empty() || raw.starts_with(".L") || raw.starts_with('$') {
                    continue;
                }
                syms.push(Symbol { addr, size: u64_at(s, 16).unwrap_or(0), name: demangle(&raw) });
            }
        }
        Ok(Table::new(syms))
    }

    /// A table of `syms` (any order).
    pub(crate) fn new(mut syms: Vec<Symbol>) -> Table {
        // At equal addresses prefer the sized (typed) symbol.
        syms.sort_by(|a, b| a.addr.cmp(&b.addr).then(b.size.cmp(&a.size)));
        syms.dedup_by(|later, first| later.addr == first.addr);
        Table { syms }
    }

    /// A table of `(address, size, name)` triples (tests).
    #[cfg(test)]
    pub(crate) fn of(syms: &[(u64, u64, &str)]) -> Table {
        Table::new(syms.iter().map(|&(addr, size, n)| Symbol { addr, size, name: n.into() }).collect())
    }

    /// A function symbol at least two bytes long: its address and name.
    #[cfg(test)]
    pub(crate) fn any_sized(&self) -> Option<(u64, String)> {
        self.syms.iter().find(|s| s.size >= 2).map(|s| (s.addr, s.name.clone()))
    }

    /// How many symbols there are.
    pub(crate) fn len(&self) -> usize {
        self.syms.len()
    }

    /// The symbol covering `addr`: the nearest one at or below it, if its
    /// size reaches `addr` (an unsized label covers up to the next symbol).
    pub(crate) fn lookup(&self, addr: u64) -> Option<&Symbol> {
        let i = self.syms.partition_point(|s| s.addr <= addr).checked_sub(1)?;
        let s = &self.syms[i];
        (s.size == 0 || addr - s.addr < s.size).then_some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(addr: u64, size: u64, name: &str) -> Symbol {
        Symbol { addr, size, name: name.into() }
    }

    #[test]
    fn lookup_by_address() {
        let t = Table::new(vec![
            sym(0x300, 0, "label"),
            sym(0x100, 0x10, "f"),
            sym(0x200, 0x80, "g"),
            sym(0x200, 0, "g_alias"),
        ]);
        assert_eq!(t.len(), 3);
        assert_eq!(t.lookup(0xff), None);
        assert_eq!(t.lookup(0x100).map(|s| s.name.as_str()), Some("f"));
        assert_eq!(t.lookup(0x10f).map(|s| s.name.as_str()), Some("f"));
        assert_eq!(t.lookup(0x110), None);
        assert_eq!(t.lookup(0x27f).map(|s| s.name.as_str()), Some("g"));
        assert_eq!(t.lookup(0x5000).map(|s| s.name.as_str()), Some("label"));
    }

    #[test]
    fn demangles_both_schemes() {
        assert_eq!(demangle("_RNvNtCsfySoobUK4LL_5alloc7raw_vec12handle_error"), "alloc::raw_vec::handle_error");
        assert_eq!(demangle("_ZN4core3fmt5write17h0123456789abcdefE"), "core::fmt::write");
        assert_eq!(demangle("syscall_entry"), "syscall_entry");
    }

    /// The host's own executable is an ELF64 with a symbol table (tests are
    /// built with symbols); this test function must be found in it.
    #[test]
    fn reads_a_real_symbol_table() {
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let t = Table::from_elf(&exe).unwrap();
        assert!(t.len() > 100);
        assert!(t.syms.iter().any(|s| s.name.ends_with("symbols::tests::reads_a_real_symbol_table")));
        assert!(Table::from_elf(b"not an elf").is_err());
    }
}
