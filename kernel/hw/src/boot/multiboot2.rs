//! The Multiboot2 adapter: the information structure GRUB passes.

use super::BootInfo;

/// `EAX` at entry when a Multiboot2 loader started us.
pub const MAGIC: u64 = 0x36d7_6289;

const TAG_END: u32 = 0;
const TAG_CMDLINE: u32 = 1;
const TAG_MODULE: u32 = 3;
const TAG_MMAP: u32 = 6;
const MMAP_RAM: u32 = 1;

/// Fills `info` from the Multiboot2 information structure at physical `base`.
pub fn parse(base: u64, info: &mut BootInfo) {
    let total: u32 = super::read_phys(base);
    let end = base + u64::from(total);
    let mut tag = base + 8;
    while tag + 8 <= end {
        let kind: u32 = super::read_phys(tag);
        let size: u32 = super::read_phys(tag + 4);
        if kind == TAG_END || size < 8 {
            break;
        }
        match kind {
            TAG_CMDLINE => {
                let mut buf = [0u8; 512];
                let n = super::read_cstr(tag + 8, &mut buf);
                info.set_cmdline(&buf[..n]);
            }
            TAG_MODULE => {
                let start: u32 = super::read_phys(tag + 8);
                let stop: u32 = super::read_phys(tag + 12);
                info.push_module(u64::from(start), u64::from(stop));
            }
            TAG_MMAP => {
                let entry_size: u32 = super::read_phys(tag + 8);
                let mut e = tag + 16;
                let tag_end = tag + u64::from(size);
                while entry_size >= 24 && e + 24 <= tag_end {
                    let addr: u64 = super::read_phys(e);
                    let len: u64 = super::read_phys(e + 8);
                    let kind: u32 = super::read_phys(e + 16);
                    info.push_region(addr, len, kind == MMAP_RAM);
                    e += u64::from(entry_size);
                }
            }
            _ => {}
        }
        tag += (u64::from(size) + 7) & !7;
    }
}
