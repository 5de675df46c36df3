//! Dropping DWARF from the programs put in the boot archive. Each program
//! is built with debug information (for GDB and `cargo xtask profile`,
//! which read the files under `target/`), which is ~95% of its bytes; the
//! archive copy keeps only what the loader and the symboliser need: the
//! loaded segments and the section headers, `.symtab`, `.strtab` and
//! `.shstrtab`. The boot archive shrinks by an order of magnitude, so each
//! boot copies less and the guest keeps that memory.
//!
//! The cut is conservative: the file is kept whole unless every removed
//! section is non-allocated and comes after every allocated one (then no
//! loaded byte, segment offset or symbol's section index changes).

/// A section header's fields this needs.
struct Section {
    name: u32,
    ty: u32,
    flags: u64,
    offset: u64,
    size: u64,
    link: u32,
    align: u64,
}

const SHF_ALLOC: u64 = 2;
const SHT_NOBITS: u32 = 8;
const SHT_REL: u32 = 9;
const SHT_RELA: u32 = 4;
const SHDR_SIZE: usize = 64;

use crate::profile::symbols::{u16_at, u32_at, u64_at};

/// `elf` without its `.debug*` sections, or `None` when it is not an ELF64
/// file laid out as the module documentation requires (keep it whole).
pub(crate) fn strip_debug(elf: &[u8]) -> Option<Vec<u8>> {
    if elf.get(..6) != Some(b"\x7fELF\x02\x01") || u16_at(elf, 0x3a)? as usize != SHDR_SIZE {
        return None;
    }
    let shoff = usize::try_from(u64_at(elf, 0x28)?).ok()?;
    let shnum = u16_at(elf, 0x3c)? as usize;
    let shstrndx = u16_at(elf, 0x3e)? as usize;
    let (phoff, phentsize, phnum) = (u64_at(elf, 0x20)? as usize, u16_at(elf, 0x36)? as usize, u16_at(elf, 0x38)?);
    let mut sections = Vec::with_capacity(shnum);
    for i in 0..shnum {
        let h = shoff.checked_add(i.checked_mul(SHDR_SIZE)?)?;
        elf.get(h..h + SHDR_SIZE)?;
        sections.push(Section {
            name: u32_at(elf, h)?,
            ty: u32_at(elf, h + 4)?,
            flags: u64_at(elf, h + 8)?,
            offset: u64_at(elf, h + 0x18)?,
            size: u64_at(elf, h + 0x20)?,
            link: u32_at(elf, h + 0x28)?,
            align: u64_at(elf, h + 0x30)?,
        });
    }
    let strtab = sections.get(shstrndx)?;
    let names = elf.get(strtab.offset as usize..(strtab.offset + strtab.size) as usize)?;
    let name = |s: &Section| -> &[u8] {
        let start = s.name as usize;
        names.get(start..).and_then(|t| t.split(|&b| b == 0).next()).unwrap_or(b"")
    };
    let drop: Vec<bool> = sections.iter().map(|s| name(s).starts_with(b".debug")).collect();
    if !drop.contains(&true) {
        return None;
    }
    let last_alloc = sections.iter().rposition(|s| s.flags & SHF_ALLOC != 0).unwrap_or(0);
    if drop.iter().enumerate().any(|(i, &d)| d && (i <= last_alloc || sections[i].flags & SHF_ALLOC != 0)) {
        return None;
    }
    if sections.iter().any(|s| matches!(s.ty, SHT_REL | SHT_RELA)) {
        return None;
    }
    // Everything loaded ends here: allocated sections and every segment.
    let mut cut = 0u64;
    for s in sections.iter().filter(|s| s.flags & SHF_ALLOC != 0 && s.ty != SHT_NOBITS) {
        cut = cut.max(s.offset.checked_add(s.size)?);
    }
    for i in 0..phnum as usize {
        let h = phoff.checked_add(i.checked_mul(phentsize)?)?;
        cut = cut.max(u64_at(elf, h + 8)?.checked_add(u64_at(elf, h + 0x20)?)?);
    }
    cut = cut.max((phoff + phentsize * phnum as usize) as u64);
    let mut out = elf.get(..usize::try_from(cut).ok()?)?.to_vec();
    // Kept non-allocated sections move down, in order; indices renumber.
    let mut new_index = vec![0u32; sections.len()];
    let mut kept = Vec::new();
    for (i, s) in sections.iter().enumerate() {
        if drop[i] {
            continue;
        }
        new_index[i] = kept.len() as u32;
        let mut offset = s.offset;
        if i > last_alloc && s.ty != SHT_NOBITS {
            let align = s.align.max(1) as usize;
            out.resize(out.len().div_ceil(align) * align, 0);
            offset = out.len() as u64;
            out.extend_from_slice(elf.get(s.offset as usize..(s.offset + s.size) as usize)?);
        }
        kept.push((i, offset));
    }
    out.resize(out.len().div_ceil(8) * 8, 0);
    let new_shoff = out.len() as u64;
    for &(i, offset) in &kept {
        let h = shoff + i * SHDR_SIZE;
        let mut header = elf[h..h + SHDR_SIZE].to_vec();
        header[0x18..0x20].copy_from_slice(&offset.to_le_bytes());
        let link = sections[i].link as usize;
        if link != 0 {
            if drop.get(link).copied().unwrap_or(true) {
                return None;
            }
            header[0x28..0x2c].copy_from_slice(&new_index[link].to_le_bytes());
        }
        out.extend_from_slice(&header);
    }
    out[0x28..0x30].copy_from_slice(&new_shoff.to_le_bytes());
    out[0x3c..0x3e].copy_from_slice(&(kept.len() as u16).to_le_bytes());
    out[0x3e..0x40].copy_from_slice(&(new_index[shstrndx] as u16).to_le_bytes());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::symbols::Table;

    /// A small static ELF64 like the linker's: one loaded `.text` at
    /// 0x400000 holding function `f` (16 bytes at +0x10), then
    /// `.debug_info`, `.symtab`, `.strtab`, `.shstrtab`, then the section
    /// headers.
    fn tiny_elf() -> Vec<u8> {
        let shstr = b"\0.text\0.debug_info\0.symtab\0.strtab\0.shstrtab\0";
        let strtab = b"\0f\0";
        let mut e = vec![0u8; 0x1000];
        e[..6].copy_from_slice(b"\x7fELF\x02\x01");
        e[6] = 1;
        e[0x10..0x12].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
        e[0x12..0x14].copy_from_slice(&0x3eu16.to_le_bytes());
        e[0x14..0x18].copy_from_slice(&1u32.to_le_bytes());
        e[0x18..0x20].copy_from_slice(&0x400010u64.to_le_bytes());
        e[0x20..0x28].copy_from_slice(&0x40u64.to_le_bytes());
        e[0x34..0x36].copy_from_slice(&64u16.to_le_bytes());
        e[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        e[0x38..0x3a].copy_from_slice(&1u16.to_le_bytes());
        e[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        // PT_LOAD R+X: file 0x1000..0x1020 at 0x400000.
        let ph = 0x40;
        e[ph..ph + 4].copy_from_slice(&1u32.to_le_bytes());
        e[ph + 4..ph + 8].copy_from_slice(&5u32.to_le_bytes());
        e[ph + 8..ph + 16].copy_from_slice(&0x1000u64.to_le_bytes());
        e[ph + 16..ph + 24].copy_from_slice(&0x400000u64.to_le_bytes());
        e[ph + 24..ph + 32].copy_from_slice(&0x400000u64.to_le_bytes());
        e[ph + 32..ph + 40].copy_from_slice(&0x20u64.to_le_bytes());
        e[ph + 40..ph + 48].copy_from_slice(&0x20u64.to_le_bytes());
        e[ph + 48..ph + 56].copy_from_slice(&0x1000u64.to_le_bytes());
        e.extend((0..0x20).map(|i| 0x90 + (i % 3) as u8)); // .text
        let debug_at = e.len();
        e.extend(std::iter::repeat_n(0xdd, 0x300)); // .debug_info
        while !e.len().is_multiple_of(8) {
            e.push(0);
        }
        let symtab_at = e.len();
        e.extend([0u8; 24]);
        let mut sym = [0u8; 24];
        sym[0..4].copy_from_slice(&1u32.to_le_bytes());
        sym[4] = 0x12; // GLOBAL FUNC
        sym[6..8].copy_from_slice(&1u16.to_le_bytes());
        sym[8..16].copy_from_slice(&0x400010u64.to_le_bytes());
        sym[16..24].copy_from_slice(&16u64.to_le_bytes());
        e.extend(sym);
        let strtab_at = e.len();
        e.extend(strtab);
        let shstr_at = e.len();
        e.extend(shstr);
        while !e.len().is_multiple_of(8) {
            e.push(0);
        }
        let shoff = e.len();
        // (name, type, flags, addr, offset, size, link, info, align, entsize)
        type Header = (u32, u32, u64, u64, usize, usize, u32, u32, u64, u64);
        let headers: [Header; 6] = [
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
            (1, 1, 6, 0x400000, 0x1000, 0x20, 0, 0, 16, 0),
            (7, 1, 0, 0, debug_at, 0x300, 0, 0, 1, 0),
            (19, 2, 0, 0, symtab_at, 48, 4, 1, 8, 24),
            (27, 3, 0, 0, strtab_at, strtab.len(), 0, 0, 1, 0),
            (35, 3, 0, 0, shstr_at, shstr.len(), 0, 0, 1, 0),
        ];
        for (name, ty, flags, addr, off, size, link, info, align, entsize) in headers {
            e.extend(name.to_le_bytes());
            e.extend(ty.to_le_bytes());
            e.extend(flags.to_le_bytes());
            e.extend(addr.to_le_bytes());
            e.extend((off as u64).to_le_bytes());
            e.extend((size as u64).to_le_bytes());
            e.extend(link.to_le_bytes());
            e.extend(info.to_le_bytes());
            e.extend(align.to_le_bytes());
            e.extend(entsize.to_le_bytes());
        }
        e[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        e[0x3c..0x3e].copy_from_slice(&6u16.to_le_bytes());
        e[0x3e..0x40].copy_from_slice(&5u16.to_le_bytes());
        e
    }

    /// Checks `stripped` against `elf`: smaller, same symbols, same
    /// entry and loaded bytes, nothing left to strip.
    fn same_but_smaller(elf: &[u8], stripped: &[u8]) {
        assert!(stripped.len() < elf.len());
        let (before, after) = (Table::from_elf(elf).unwrap(), Table::from_elf(stripped).unwrap());
        assert_eq!(before.len(), after.len());
        let (addr, name) = before.any_sized().unwrap();
        assert_eq!(after.lookup(addr).map(|s| s.name.clone()), Some(name));
        let (a, b) = (oxok_elf::Elf::parse(elf, u64::MAX).unwrap(), oxok_elf::Elf::parse(stripped, u64::MAX).unwrap());
        assert_eq!(a.entry(), b.entry());
        let segs = |e: &oxok_elf::Elf<'_>| e.segments().map(|s| format!("{s:?}")).collect::<Vec<_>>();
        assert_eq!(segs(&a), segs(&b));
        assert!(strip_debug(stripped).is_none(), "no .debug section is left");
    }

    #[test]
    fn keeps_segments_and_symbols_and_drops_dwarf() {
        let elf = tiny_elf();
        let stripped = strip_debug(&elf).expect("strippable");
        same_but_smaller(&elf, &stripped);
        assert_eq!(Table::from_elf(&stripped).unwrap().lookup(0x400015).map(|s| s.name.clone()), Some("f".into()));
        assert!(!stripped.windows(0x300).any(|w| w.iter().all(|&b| b == 0xdd)), "the DWARF bytes are gone");
    }

    #[test]
    fn a_real_program_too() {
        // When an earlier build left Oxok programs, the same for each.
        let Ok(ws) = crate::meta::Workspace::load() else { return };
        let dir = ws.target_dir.join("x86_64-unknown-none").join("release");
        for name in ["hello", "init", "shell"] {
            if let Ok(elf) = std::fs::read(dir.join(name)) {
                same_but_smaller(&elf, &strip_debug(&elf).expect("a linker-made program strips"));
            }
        }
    }

    #[test]
    fn refuses_what_it_does_not_understand() {
        assert!(strip_debug(b"not an elf").is_none());
        assert!(strip_debug(&[0x7f, b'E', b'L', b'F', 2, 1, 0, 0]).is_none());
        // A debug section before an allocated one: kept whole.
        let mut elf = tiny_elf();
        let shoff = u64_at(&elf, 0x28).unwrap() as usize;
        let text_flags = shoff + SHDR_SIZE + 8;
        let debug_flags = shoff + 2 * SHDR_SIZE + 8;
        elf[text_flags..text_flags + 8].copy_from_slice(&0u64.to_le_bytes());
        elf[debug_flags..debug_flags + 8].copy_from_slice(&SHF_ALLOC.to_le_bytes());
        assert!(strip_debug(&elf).is_none());
    }
}
