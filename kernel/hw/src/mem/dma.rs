//! Memory the network device reads and writes: the `virtio-drivers` [`Hal`]
//! and kernel-owned buffer frames. There is no IOMMU, so the device can reach
//! any physical address it is given; every address handed to it comes from
//! here and is a frame the kernel owns (checked in the frame table).

use super::addr::Pfn;
use super::{PAGE_SIZE, addr, frame, phys};
use core::ptr::NonNull;
use oxok_abi::frames::OWNER_KERNEL;
use virtio_drivers::{BufferDirection, Hal, PhysAddr};

/// The first physical address past the uncached MMIO window of the direct
/// map (the 3–4 GiB gigabyte is mapped cache-disabled, see `paging::init`).
const MMIO_WINDOW: (u64, u64) = (3 << 30, 4 << 30);

/// True if `[pa, pa+len)` lies in the direct map's uncached window, where
/// device registers may be accessed.
pub fn mmio_ok(pa: u64, len: u64) -> bool {
    pa >= MMIO_WINDOW.0 && pa.checked_add(len).is_some_and(|end| end <= MMIO_WINDOW.1)
}

/// True if every frame of `[pa, pa+len)` is owned by the kernel.
fn kernel_owned(pa: u64, len: u64) -> bool {
    let first = pa / PAGE_SIZE;
    let last = (pa + len.max(1) - 1) / PAGE_SIZE;
    frame::with(|f| (first..=last).all(|n| f.entry(Pfn::from_word(n)).is_some_and(|e| e.owner == OWNER_KERNEL)))
}

/// The `Hal` of the kernel's virtio devices.
pub struct KernelHal;

// SAFETY: `dma_alloc` returns zeroed, physically contiguous, kernel-owned
// frames that nothing else uses until `dma_dealloc`; `share` hands the
// device the physical address of a buffer only after checking that it lies
// in kernel-owned, direct-mapped frames (no bounce buffers are needed: the
// direct map is identity-offset and coherent).
unsafe impl Hal for KernelHal {
    fn dma_alloc(pages: usize, _direction: BufferDirection) -> (PhysAddr, NonNull<u8>) {
        match frame::with(|f| f.alloc_contiguous(pages, 1, OWNER_KERNEL)) {
            Some(pa) => {
                for i in 0..pages as u64 {
                    // SAFETY: the frames were just allocated to the kernel
                    // for this buffer; nothing else uses them.
                    unsafe { frame::zero(pa.offset(i * PAGE_SIZE)) };
                }
                match NonNull::new(phys::virt(pa) as *mut u8) {
                    Some(va) => (pa.raw(), va),
                    None => (0, NonNull::dangling()),
                }
            }
            None => (0, NonNull::dangling()),
        }
    }

    unsafe fn dma_dealloc(paddr: PhysAddr, _vaddr: NonNull<u8>, pages: usize) -> i32 {
        frame::with(|f| {
            for i in 0..pages as u64 {
                f.free(addr::PhysAddr::new(paddr).offset(i * PAGE_SIZE));
            }
        });
        0
    }

    unsafe fn mmio_phys_to_virt(paddr: PhysAddr, size: usize) -> NonNull<u8> {
        // The network module checks every BAR with `mmio_ok` before it
        // builds a transport; anything else is a kernel bug.
        assert!(mmio_ok(paddr, size as u64), "device registers outside the uncached window");
        NonNull::new(phys::virt(addr::PhysAddr::new(paddr)) as *mut u8).unwrap_or(NonNull::dangling())
    }

    unsafe fn share(buffer: NonNull<[u8]>, _direction: BufferDirection) -> PhysAddr {
        let va = buffer.as_ptr() as *mut u8 as u64;
        let len = buffer.len() as u64;
        let pa = va.wrapping_sub(phys::DIRECT_BASE);
        // Only `DmaBuf`s and `dma_alloc` memory are ever shared; a buffer
        // elsewhere would be a kernel bug, and the device must not see it.
        assert!(va >= phys::DIRECT_BASE && kernel_owned(pa, len), "DMA buffer outside kernel frames");
        pa
    }

    unsafe fn unshare(_paddr: PhysAddr, _buffer: NonNull<[u8]>, _direction: BufferDirection) {}
}

/// One kernel-owned frame used as a device buffer (a received or
/// transmitted packet with its virtio header). Freed when dropped.
pub struct DmaBuf {
    pa: addr::PhysAddr,
}

impl DmaBuf {
    /// A fresh zeroed kernel frame, or `None` when memory is out.
    pub fn new() -> Option<DmaBuf> {
        frame::with(|f| f.alloc(OWNER_KERNEL)).map(|pa| DmaBuf { pa })
    }

    /// Its physical address.
    pub fn pa(&self) -> addr::PhysAddr {
        self.pa
    }

    /// The frame's bytes.
    pub fn bytes(&mut self) -> &mut [u8] {
        // The device writes the frame only while it is posted, and the driver
        // reads it only after the device returned it.
        // SAFETY: the frame is kernel-owned, direct-mapped and referenced by
        // this `DmaBuf` alone; the borrow of `self` keeps the slice unique.
        unsafe { core::slice::from_raw_parts_mut(phys::virt(self.pa) as *mut u8, PAGE_SIZE as usize) }
    }
}

impl Drop for DmaBuf {
    fn drop(&mut self) {
        frame::with(|f| f.free(self.pa));
    }
}
