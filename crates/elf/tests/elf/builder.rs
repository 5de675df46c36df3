//! A tiny builder of ELF64 images for tests, plus field patch helpers.

/// The address limit most tests parse with (the x86-64 lower half).
pub const LIMIT: u64 = 1 << 47;

pub const PT_LOAD: u32 = 1;
pub const PT_PHDR: u32 = 6;
pub const PT_TLS: u32 = 7;
pub const PT_GNU_STACK: u32 = 0x6474_e551;
pub const R: u32 = 4;
pub const W: u32 = 2;
pub const X: u32 = 1;

/// Offsets of file-header fields.
pub mod ehdr {
    pub const CLASS: usize = 4;
    pub const DATA: usize = 5;
    pub const IDENT_VERSION: usize = 6;
    pub const TYPE: usize = 16;
    pub const MACHINE: usize = 18;
    pub const VERSION: usize = 20;
    pub const ENTRY: usize = 24;
    pub const PHOFF: usize = 32;
    pub const EHSIZE: usize = 52;
    pub const PHENTSIZE: usize = 54;
    pub const PHNUM: usize = 56;
}

/// Offsets of program-header fields, relative to the entry.
pub mod phdr {
    pub const TYPE: usize = 0;
    pub const FLAGS: usize = 4;
    pub const OFFSET: usize = 8;
    pub const VADDR: usize = 16;
    pub const FILESZ: usize = 32;
    pub const MEMSZ: usize = 40;
    pub const ALIGN: usize = 48;
}

/// One program header to emit.
#[derive(Clone, Copy, Debug)]
pub struct Ph {
    pub kind: u32,
    pub flags: u32,
    pub offset: u64,
    pub vaddr: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub align: u64,
}

/// A PT_LOAD header.
pub fn load(flags: u32, offset: u64, vaddr: u64, filesz: u64, memsz: u64) -> Ph {
    Ph { kind: PT_LOAD, flags, offset, vaddr, filesz, memsz, align: 4096 }
}

/// An ELF64 x86-64 ET_EXEC image with program headers at offset 64 and
/// `file_len` bytes in all (a recognisable pattern after the headers).
pub fn image(entry: u64, phs: &[Ph], file_len: usize) -> Vec<u8> {
    let table_end = 64 + 56 * phs.len();
    let mut f: Vec<u8> = (0..file_len.max(table_end)).map(|i| (i * 31 % 251) as u8).collect();
    f[..64].fill(0);
    f[..4].copy_from_slice(b"\x7fELF");
    f[ehdr::CLASS] = 2;
    f[ehdr::DATA] = 1;
    f[ehdr::IDENT_VERSION] = 1;
    set16(&mut f, ehdr::TYPE, 2);
    set16(&mut f, ehdr::MACHINE, 62);
    set32(&mut f, ehdr::VERSION, 1);
    set64(&mut f, ehdr::ENTRY, entry);
    set64(&mut f, ehdr::PHOFF, 64);
    set16(&mut f, ehdr::EHSIZE, 64);
    set16(&mut f, ehdr::PHENTSIZE, 56);
    set16(&mut f, ehdr::PHNUM, phs.len() as u16);
    for (i, ph) in phs.iter().enumerate() {
        let at = ph_at(i);
        set32(&mut f, at + phdr::TYPE, ph.kind);
        set32(&mut f, at + phdr::FLAGS, ph.flags);
        set64(&mut f, at + phdr::OFFSET, ph.offset);
        set64(&mut f, at + phdr::VADDR, ph.vaddr);
        set64(&mut f, at + 24, ph.vaddr);
        set64(&mut f, at + phdr::FILESZ, ph.filesz);
        set64(&mut f, at + phdr::MEMSZ, ph.memsz);
        set64(&mut f, at + phdr::ALIGN, ph.align);
    }
    f
}

/// The usual shape: headers+text RX at 0x400000, data+bss RW at 0x402000,
/// and a PT_GNU_STACK that must be ignored.
pub fn typical() -> Vec<u8> {
    image(
        0x400100,
        &[
            load(R | X, 0, 0x400000, 0x1800, 0x1800),
            load(R | W, 0x1800, 0x402800, 0x100, 0x3000),
            Ph { kind: PT_GNU_STACK, flags: R | W, offset: 0, vaddr: 0, filesz: 0, memsz: 0, align: 16 },
        ],
        0x1900,
    )
}

/// File offset of program header `i` in images from [`image`].
pub fn ph_at(i: usize) -> usize {
    64 + 56 * i
}

pub fn set16(f: &mut [u8], at: usize, v: u16) {
    f[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

pub fn set32(f: &mut [u8], at: usize, v: u32) {
    f[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

pub fn set64(f: &mut [u8], at: usize, v: u64) {
    f[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
