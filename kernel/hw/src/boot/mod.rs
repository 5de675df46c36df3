//! Boot: one internal description of what the boot loader handed us, with an
//! adapter per protocol (PVH for QEMU `-kernel`, Multiboot2 for GRUB).

mod entry;
mod multiboot2;
mod pvh;

/// Most memory-map entries and modules we keep; firmware maps are far
/// smaller, and extra entries are dropped with a warning.
pub const MAX_REGIONS: usize = 64;
/// Most boot modules we keep.
pub const MAX_MODULES: usize = 8;

/// Which protocol started the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// Xen PVH direct boot (QEMU `-kernel`).
    Pvh,
    /// Multiboot2 (GRUB).
    Multiboot2,
}

/// What a memory-map entry describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionKind {
    /// Usable RAM.
    Ram,
    /// Anything else: firmware, ACPI, MMIO holes, bad memory.
    Reserved,
}

/// One physical memory range `[start, end)`.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// What it is.
    pub kind: RegionKind,
}

/// One boot module (the boot archive) in physical memory, `[start, end)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Module {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

/// Everything the kernel learns from the boot loader, in one shape whatever
/// the protocol.
pub struct BootInfo {
    /// Who booted us.
    pub protocol: Protocol,
    regions: [Region; MAX_REGIONS],
    region_count: usize,
    modules: [Module; MAX_MODULES],
    module_count: usize,
    cmdline: [u8; 512],
    cmdline_len: usize,
}

/// Why the boot information could not be used.
#[derive(Clone, Copy, Debug)]
pub enum BootError {
    /// Neither the Multiboot2 nor the PVH magic was present.
    UnknownProtocol,
    /// The loader passed no memory map.
    NoMemoryMap,
    /// The boot information was already read once (it is parsed at entry
    /// only: later calls could aim the parser at any physical address).
    AlreadyParsed,
}

/// The two registers the boot trampoline preserved (`eax`, `ebx` at
/// entry: the protocol's magic and the physical address of its boot
/// information), made only by the trampoline's call into the kernel and
/// read only by [`BootInfo::from_entry`]: no other code can aim the boot
/// parser at a physical address.
pub struct Entry {
    eax: u64,
    ebx: u64,
}

/// Set once [`BootInfo::from_entry`] ran.
static PARSED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

impl BootInfo {
    /// Builds the boot information from the two registers the trampoline
    /// preserved: `eax` and `ebx` at entry.
    /// Works once: later calls return [`BootError::AlreadyParsed`].
    pub fn from_entry(entry: Entry) -> Result<BootInfo, BootError> {
        let Entry { eax, ebx } = entry;
        if PARSED.swap(true, core::sync::atomic::Ordering::Relaxed) {
            return Err(BootError::AlreadyParsed);
        }
        let mut info = BootInfo {
            protocol: Protocol::Pvh,
            regions: [Region { start: 0, end: 0, kind: RegionKind::Reserved }; MAX_REGIONS],
            region_count: 0,
            modules: [Module::default(); MAX_MODULES],
            module_count: 0,
            cmdline: [0; 512],
            cmdline_len: 0,
        };
        if eax == multiboot2::MAGIC {
            info.protocol = Protocol::Multiboot2;
            multiboot2::parse(ebx, &mut info);
        } else if pvh::is_pvh(ebx) {
            info.protocol = Protocol::Pvh;
            pvh::parse(ebx, &mut info);
        } else {
            return Err(BootError::UnknownProtocol);
        }
        if info.region_count == 0 {
            return Err(BootError::NoMemoryMap);
        }
        Ok(info)
    }

    fn push_region(&mut self, start: u64, len: u64, ram: bool) {
        let Some(end) = start.checked_add(len) else {
            return;
        };
        if len == 0 {
            return;
        }
        if self.region_count == MAX_REGIONS {
            log::warn!("boot: memory map entry {start:#x}..{end:#x} dropped (more than {MAX_REGIONS})");
            return;
        }
        let kind = if ram { RegionKind::Ram } else { RegionKind::Reserved };
        self.regions[self.region_count] = Region { start, end, kind };
        self.region_count += 1;
    }

    fn push_module(&mut self, start: u64, end: u64) {
        if self.module_count < MAX_MODULES && end > start {
            self.modules[self.module_count] = Module { start, end };
            self.module_count += 1;
        }
    }

    fn set_cmdline(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.cmdline.len());
        self.cmdline[..n].copy_from_slice(&bytes[..n]);
        self.cmdline_len = n;
    }

    /// The physical memory map as the loader gave it.
    pub fn regions(&self) -> &[Region] {
        &self.regions[..self.region_count]
    }

    /// Boot modules (the first is the boot archive).
    pub fn modules(&self) -> &[Module] {
        &self.modules[..self.module_count]
    }

    /// The bytes of boot module `index`: frames the kernel reserved at boot
    /// and never frees or writes.
    pub fn module_bytes(&self, index: usize) -> Option<&'static [u8]> {
        let m = self.modules().get(index)?;
        let len = usize::try_from(m.end.checked_sub(m.start)?).ok()?;
        // `BootInfo` is built only by `from_entry`, once, so this is not an
        // address a caller chose.
        // SAFETY: a module the boot loader reported; its frames are kernel-owned
        // from `frame::init` on, direct-mapped and never written or freed.
        Some(unsafe { crate::mem::phys::bytes(crate::mem::addr::PhysAddr::new(m.start), len) })
    }

    /// The kernel command line (invalid UTF-8 reads as empty).
    pub fn cmdline(&self) -> &str {
        core::str::from_utf8(&self.cmdline[..self.cmdline_len]).unwrap_or("")
    }
}

/// Reads a `T` at physical address `pa` of a structure the boot loader
/// handed over (boot code only: never reachable from safe modules).
fn read_phys<T: Copy>(pa: u64) -> T {
    // SAFETY: boot structures live in the first 4 GiB, direct-mapped by the
    // boot page tables; callers read integers, for which any bits are valid.
    unsafe { crate::mem::phys::read(crate::mem::addr::PhysAddr::new(pa)) }
}

/// Reads a NUL-terminated string of at most `max` bytes at physical address
/// `pa` into `out`, returning its length.
fn read_cstr(pa: u64, out: &mut [u8]) -> usize {
    let mut n = 0;
    while n < out.len() {
        let b: u8 = read_phys(pa + n as u64);
        if b == 0 {
            break;
        }
        out[n] = b;
        n += 1;
    }
    n
}

unsafe extern "Rust" {
    /// The kernel proper's entry, defined by its [`crate::entry!`].
    safe fn __oxok_kernel_start(entry: Entry) -> !;
}

/// Called by the trampoline (`entry.rs`) in long mode on the kernel stack.
#[unsafe(no_mangle)]
extern "C" fn kernel_main(eax: u64, ebx: u64) -> ! {
    __oxok_kernel_start(Entry { eax, ebx })
}
