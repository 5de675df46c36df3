//! Unpacking the ELF `vmlinux` from a bzImage, so that QEMU enters Debian's
//! kernel by PVH (its `XEN_ELFNOTE_PHYS32_ENTRY` note) exactly as it enters
//! Oxok's: no real-mode setup and no decompression inside the slow guest.

use std::path::Path;
use std::process::Command;

/// Compression of a bzImage payload, recognised by its magic bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    Xz,
    Gzip,
    Zstd,
}

impl Compression {
    /// `(program, Debian package)` that decompresses it with `-dc FILE`.
    pub(crate) fn tool(self) -> (&'static str, &'static str) {
        match self {
            Compression::Xz => ("xz", "xz-utils"),
            Compression::Gzip => ("gzip", "gzip"),
            Compression::Zstd => ("zstd", "zstd"),
        }
    }
}

/// The compressed kernel inside a bzImage: the bytes from the payload's
/// start to the end of the file (decompressors stop at the stream's end).
pub(crate) fn payload(bzimage: &[u8]) -> Result<(&[u8], Compression), String> {
    let u32_at = |at: usize| bzimage.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap()));
    let u16_at = |at: usize| bzimage.get(at..at + 2).map(|b| u16::from_le_bytes(b.try_into().unwrap()));
    if bzimage.get(0x202..0x206) != Some(b"HdrS") {
        return Err("not a bzImage (no HdrS signature)".into());
    }
    if u16_at(0x206).unwrap_or(0) < 0x208 {
        return Err("bzImage boot protocol older than 2.08 (no payload fields)".into());
    }
    let setup_sects = match bzimage[0x1f1] {
        0 => 4,
        n => n as usize,
    };
    let offset = u32_at(0x248).ok_or("truncated bzImage header")? as usize;
    let start = (setup_sects + 1) * 512 + offset;
    let data = bzimage.get(start..).filter(|d| d.len() > 6).ok_or("bzImage payload outside the file")?;
    let kind = if data.starts_with(b"\xfd7zXZ\0") {
        Compression::Xz
    } else if data.starts_with(b"\x1f\x8b") {
        Compression::Gzip
    } else if data.starts_with(b"\x28\xb5\x2f\xfd") {
        Compression::Zstd
    } else {
        return Err(format!("unsupported bzImage compression (magic {:02x?})", &data[..4]));
    };
    Ok((data, kind))
}

/// Whether `elf` is an x86-64 ELF with a PVH entry note (name `Xen`,
/// type 18) in one of its `PT_NOTE` segments.
pub(crate) fn has_pvh_note(elf: &[u8]) -> bool {
    let u16_at = |at: usize| elf.get(at..at + 2).map(|b| u16::from_le_bytes(b.try_into().unwrap()) as usize);
    let u32_at = |at: usize| elf.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize);
    let u64_at = |at: usize| elf.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap()) as usize);
    if !elf.starts_with(b"\x7fELF\x02\x01") || u16_at(0x12) != Some(0x3e) {
        return false;
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(0x20), u16_at(0x36), u16_at(0x38)) else {
        return false;
    };
    (0..phnum).any(|i| {
        let ph = phoff + i * phentsize;
        if u32_at(ph) != Some(4) {
            return false; // not PT_NOTE
        }
        let (Some(off), Some(size)) = (u64_at(ph + 8), u64_at(ph + 32)) else {
            return false;
        };
        let mut at = off;
        while at + 12 <= off.saturating_add(size) {
            let (Some(namesz), Some(descsz), Some(kind)) = (u32_at(at), u32_at(at + 4), u32_at(at + 8)) else {
                return false;
            };
            let name = elf.get(at + 12..at + 12 + namesz).unwrap_or(b"");
            if kind == 18 && name == b"Xen\0" {
                return true;
            }
            at += 12 + namesz.next_multiple_of(4) + descsz.next_multiple_of(4);
        }
        false
    })
}

/// Decompresses `bzimage`'s payload with the host tool for its compression
/// (`work` holds a temporary file) and returns the ELF image if it has a PVH
/// entry note.
pub(crate) fn unpack(bzimage: &Path, work: &Path) -> Result<Vec<u8>, String> {
    let image = std::fs::read(bzimage).map_err(|e| format!("cannot read {}: {e}", bzimage.display()))?;
    let (data, kind) = payload(&image)?;
    let (program, _) = kind.tool();
    let tmp = work.join("payload.tmp");
    std::fs::write(&tmp, data).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    // The payload is followed by the decompressor's own data, so the tool
    // may complain about trailing bytes: judge by what it wrote.
    let out = Command::new(program).arg("-dc").arg(&tmp).output().map_err(|e| format!("could not run {program}: {e}"));
    let _ = std::fs::remove_file(&tmp);
    let elf = out?.stdout;
    if has_pvh_note(&elf) { Ok(elf) } else { Err(format!("the kernel in {} has no PVH entry note", bzimage.display())) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 with one PT_NOTE segment holding `notes`.
    fn elf_with_notes(notes: &[(&[u8], u32)]) -> Vec<u8> {
        let mut e = vec![0u8; 0x40 + 0x38];
        e[..6].copy_from_slice(b"\x7fELF\x02\x01");
        e[0x12] = 0x3e;
        e[0x20..0x28].copy_from_slice(&0x40u64.to_le_bytes());
        e[0x36] = 0x38;
        e[0x38] = 1;
        let start = e.len();
        for (name, kind) in notes {
            e.extend_from_slice(&(name.len() as u32).to_le_bytes());
            e.extend_from_slice(&8u32.to_le_bytes());
            e.extend_from_slice(&kind.to_le_bytes());
            e.extend_from_slice(name);
            e.resize(e.len().next_multiple_of(4), 0);
            e.extend_from_slice(&0x0100_0850u64.to_le_bytes());
        }
        let ph = 0x40;
        e[ph..ph + 4].copy_from_slice(&4u32.to_le_bytes());
        e[ph + 8..ph + 16].copy_from_slice(&(start as u64).to_le_bytes());
        let size = (e.len() - start) as u64;
        e[ph + 32..ph + 40].copy_from_slice(&size.to_le_bytes());
        e
    }

    #[test]
    fn finds_the_pvh_note() {
        assert!(has_pvh_note(&elf_with_notes(&[(b"Xen\0", 6), (b"GNU\0", 3), (b"Xen\0", 18)])));
        assert!(!has_pvh_note(&elf_with_notes(&[(b"Xen\0", 6), (b"GNU\0", 18)])));
        assert!(!has_pvh_note(b"\x7fELF\x02\x01"));
        assert!(!has_pvh_note(b"MZ"));
    }

    #[test]
    fn locates_the_payload() {
        let mut img = vec![0u8; 0x1000];
        img[0x1f1] = 2; // setup sectors: protected-mode code at 3 * 512
        img[0x202..0x206].copy_from_slice(b"HdrS");
        img[0x206..0x208].copy_from_slice(&0x20fu16.to_le_bytes());
        img[0x248..0x24c].copy_from_slice(&0x100u32.to_le_bytes());
        img[0x700..0x706].copy_from_slice(b"\xfd7zXZ\0");
        let (data, kind) = payload(&img).unwrap();
        assert_eq!(kind, Compression::Xz);
        assert_eq!(data.len(), 0x1000 - 0x700);
        img[0x700] = 0x1f;
        img[0x701] = 0x8b;
        assert_eq!(payload(&img).unwrap().1, Compression::Gzip);
        img[0x700] = 0;
        assert!(payload(&img).is_err());
        img[0x202] = 0;
        assert!(payload(&img).is_err());
    }
}
