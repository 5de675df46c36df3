//! The PVH adapter: `hvm_start_info` as QEMU's `-kernel` loader builds it.

use super::BootInfo;

const MAGIC: u32 = 0x336e_c578;
const E820_RAM: u32 = 1;

/// True if `ebx` points at a PVH start-info structure.
pub fn is_pvh(ebx: u64) -> bool {
    ebx != 0 && super::read_phys::<u32>(ebx) == MAGIC
}

/// Fills `info` from the start-info structure at physical `base`.
pub fn parse(base: u64, info: &mut BootInfo) {
    let version: u32 = super::read_phys(base + 4);
    let nr_modules: u32 = super::read_phys(base + 12);
    let modlist: u64 = super::read_phys(base + 16);
    let cmdline: u64 = super::read_phys(base + 24);

    if cmdline != 0 {
        let mut buf = [0u8; 512];
        let n = super::read_cstr(cmdline, &mut buf);
        info.set_cmdline(&buf[..n]);
    }
    for i in 0..u64::from(nr_modules) {
        let entry = modlist + i * 32;
        let start: u64 = super::read_phys(entry);
        let size: u64 = super::read_phys(entry + 8);
        info.push_module(start, start.saturating_add(size));
    }
    if version >= 1 {
        let memmap: u64 = super::read_phys(base + 40);
        let entries: u32 = super::read_phys(base + 48);
        for i in 0..u64::from(entries) {
            let e = memmap + i * 24;
            let addr: u64 = super::read_phys(e);
            let size: u64 = super::read_phys(e + 8);
            let kind: u32 = super::read_phys(e + 16);
            info.push_region(addr, size, kind == E820_RAM);
        }
    }
}
