//! Structures that cross the kernel/user boundary through memory.

/// A complete user register set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
#[allow(missing_docs)]
pub struct Regs {
    pub rax: u64,
    pub rbx: u64,
    pub rcx: u64,
    pub rdx: u64,
    pub rsi: u64,
    pub rdi: u64,
    pub rbp: u64,
    pub rsp: u64,
    pub r8: u64,
    pub r9: u64,
    pub r10: u64,
    pub r11: u64,
    pub r12: u64,
    pub r13: u64,
    pub r14: u64,
    pub r15: u64,
    pub rip: u64,
    pub rflags: u64,
}

impl Regs {
    /// Every register 0.
    pub const ZERO: Regs = Regs {
        rax: 0,
        rbx: 0,
        rcx: 0,
        rdx: 0,
        rsi: 0,
        rdi: 0,
        rbp: 0,
        rsp: 0,
        r8: 0,
        r9: 0,
        r10: 0,
        r11: 0,
        r12: 0,
        r13: 0,
        r14: 0,
        r15: 0,
        rip: 0,
        rflags: 0,
    };
}

/// Layout version of [`EnvState`]: `env_set_state` refuses any other.
pub const ENV_STATE_VERSION: u64 = 2;

/// An environment's complete user-visible state (`env_get_state`,
/// `env_set_state`), version [`ENV_STATE_VERSION`]. A call in progress is
/// part of `regs`: restartable calls leave `rip` on their `syscall` with
/// advanced arguments — a sleeper's registers say `env_sleep(mask)`, and a
/// caller waiting for a synchronous `pct_call` reply says
/// `pct_wait(callee, ticket)` — so the state, imported anywhere, continues
/// the call. Build one with [`EnvState::new`] (version set, clean FPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct EnvState {
    /// [`ENV_STATE_VERSION`].
    pub version: u64,
    /// Reserved; 0 (ignored on import). The status (`ENV_*`) is in the
    /// environment table; an import clears sleep and wait.
    pub reserved0: u64,
    /// General registers, `rip` and `rflags`.
    pub regs: Regs,
    /// Upcall entries by kind (see [`crate::upcall`]); 0 = none.
    pub upcalls: [u64; crate::upcall::KINDS],
    /// FS base (`env_set_base`; `%fs:` addressing, thread-local storage).
    pub fs_base: u64,
    /// GS base (`env_set_base`; `%gs:` addressing).
    pub gs_base: u64,
    /// The x87/MMX/SSE state in FXSAVE format.
    pub fpu: FpuState,
    /// The protected control transfer it is serving, if any.
    pub pct: PctState,
    /// Installed wakeup predicates by predicate index.
    pub preds: [PredState; crate::PREDICATES],
    /// Reserved (keeps the size a multiple of 16 with no padding); 0.
    pub reserved: u64,
}

impl EnvState {
    /// An all-zero state of the current version with a clean FPU.
    pub const fn new() -> EnvState {
        EnvState {
            version: ENV_STATE_VERSION,
            reserved0: 0,
            regs: Regs::ZERO,
            upcalls: [0; crate::upcall::KINDS],
            fs_base: 0,
            gs_base: 0,
            fpu: FpuState::CLEAN,
            pct: PctState { serving: 0, caller: 0, ticket: 0, saved: Regs::ZERO },
            preds: [PredState::EMPTY; crate::PREDICATES],
            reserved: 0,
        }
    }
}

impl Default for EnvState {
    fn default() -> EnvState {
        EnvState::new()
    }
}

/// The x87/MMX/SSE register state in the 512-byte FXSAVE format (Intel
/// SDM vol. 1 §10.5.1): FCW at byte 0, FSW 2, abridged FTW 4, MXCSR 24,
/// ST0–ST7 at 32 (16 bytes each), XMM0–XMM15 at 160 (16 bytes each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(16))]
pub struct FpuState {
    /// The raw FXSAVE image.
    pub bytes: [u8; 512],
}

/// MXCSR after reset: all SIMD exceptions masked, round to nearest.
pub const MXCSR_DEFAULT: u32 = 0x1f80;
/// x87 control word after `fninit`.
pub const FCW_DEFAULT: u16 = 0x037f;

impl FpuState {
    /// The state of a new environment: as after `fninit` (empty x87 stack,
    /// control word 0x37f), MXCSR 0x1f80, every register zero.
    pub const CLEAN: FpuState = {
        let mut bytes = [0u8; 512];
        let fcw = FCW_DEFAULT.to_le_bytes();
        bytes[0] = fcw[0];
        bytes[1] = fcw[1];
        let mx = MXCSR_DEFAULT.to_le_bytes();
        bytes[24] = mx[0];
        bytes[25] = mx[1];
        bytes[26] = mx[2];
        bytes[27] = mx[3];
        FpuState { bytes }
    };

    /// The x87 control word.
    pub fn fcw(&self) -> u16 {
        u16::from_le_bytes([self.bytes[0], self.bytes[1]])
    }

    /// MXCSR.
    pub fn mxcsr(&self) -> u32 {
        u32::from_le_bytes([self.bytes[24], self.bytes[25], self.bytes[26], self.bytes[27]])
    }

    /// XMM register `i` (0..16) as two little-endian halves.
    pub fn xmm(&self, i: usize) -> [u64; 2] {
        let at = 160 + 16 * (i % 16);
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        lo.copy_from_slice(&self.bytes[at..at + 8]);
        hi.copy_from_slice(&self.bytes[at + 8..at + 16]);
        [u64::from_le_bytes(lo), u64::from_le_bytes(hi)]
    }
}

impl Default for FpuState {
    fn default() -> FpuState {
        FpuState::CLEAN
    }
}

/// A protected control transfer being served (`EnvState::pct`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct PctState {
    /// 1 while serving a transfer (between the entry and `pct_reply`).
    pub serving: u64,
    /// The synchronous caller owed a reply (0: asynchronous, or owed to
    /// nobody).
    pub caller: u64,
    /// The call's ticket (the caller's `pct_wait` names it); 0 with no
    /// caller.
    pub ticket: u64,
    /// The state the transfer interrupted; `pct_reply` resumes it.
    pub saved: Regs,
}

/// One wakeup-predicate index (`EnvState::preds`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct PredState {
    /// Length of the program in bytes; 0: the slot is empty.
    pub len: u64,
    /// Its parameters (`pred_param`).
    pub params: [u64; crate::pred::PARAMS],
    /// The program as given to `pred_install` (first `len` bytes).
    pub code: [u8; crate::pred::MAX_BYTES],
}

impl PredState {
    /// An empty slot.
    pub const EMPTY: PredState =
        PredState { len: 0, params: [0; crate::pred::PARAMS], code: [0; crate::pred::MAX_BYTES] };
}

impl Default for PredState {
    fn default() -> PredState {
        PredState::EMPTY
    }
}

/// What the kernel writes on the exception stack for an exception, page
/// fault or foreign system call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct ExceptionFrame {
    /// CPU vector (14 = page fault), or `upcall::VECTOR_SYSCALL`.
    pub vector: u64,
    /// CPU error code (0 when none).
    pub error: u64,
    /// Faulting address for page faults; 0 otherwise.
    pub addr: u64,
    /// The interrupted registers; the handler resumes from them. The
    /// interrupted x87/SSE state is not copied here: it is still live in
    /// the unit while the handler runs (see [`crate::upcall`]).
    pub regs: Regs,
}

/// The most pages one share record names ([`MapEntry::share_run`]): one
/// span of a last-level table (`layout::pte::SUMMARY_SPAN` entries, the
/// pages one summary bit covers), so a run is marked in one step.
pub const SHARE_RUN_MAX: u64 = crate::layout::pte::SUMMARY_SPAN as u64;

/// One record of `page_batch`: a map, an unmap, a protect or a share,
/// chosen by `frame_slot`. Build records with the constructors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct MapEntry {
    /// Page address in the target environment.
    pub va: u64,
    /// Frame capability slot (a map), or [`UNMAP`](crate::UNMAP),
    /// [`PROTECT`](crate::PROTECT), [`SHARE`](crate::SHARE),
    /// [`FRESH`](crate::FRESH) or [`COPY`](crate::COPY).
    pub frame_slot: u64,
    /// Page flags for map, protect and share.
    pub flags: u64,
    /// For a protect that adds write: the capability slot presented for the
    /// frame (see `page_protect`). For a share: the page address in the
    /// caller's own space whose frame is shared, or of the exposed boot
    /// archive. Unused otherwise.
    pub src: u64,
}

impl MapEntry {
    /// Map the frame named by the capability in `frame_slot` at `va`.
    pub const fn map(va: u64, frame_slot: u64, flags: u64) -> MapEntry {
        MapEntry { va, frame_slot, flags, src: 0 }
    }

    /// Remove the mapping at `va`.
    pub const fn unmap(va: u64) -> MapEntry {
        MapEntry { va, frame_slot: crate::UNMAP, flags: 0, src: 0 }
    }

    /// Change the flags at `va`, removing rights or changing libOS bits
    /// only.
    pub const fn protect(va: u64, flags: u64) -> MapEntry {
        MapEntry { va, frame_slot: crate::PROTECT, flags, src: 0 }
    }

    /// Change the flags at `va`, presenting the capability in `cap_slot`
    /// in case write is added.
    pub const fn protect_with(va: u64, flags: u64, cap_slot: u64) -> MapEntry {
        MapEntry { va, frame_slot: crate::PROTECT, flags, src: cap_slot }
    }

    /// Map at `va` the frame the caller itself maps at `src`; or, with
    /// `src` a page of the exposed boot archive, that page (read-only).
    pub const fn share(va: u64, src: u64, flags: u64) -> MapEntry {
        MapEntry { va, frame_slot: crate::SHARE, flags, src }
    }

    /// A share of `pages` consecutive pages (1 to [`SHARE_RUN_MAX`]) from
    /// `src` on to `va` on, all inside one aligned block of
    /// [`SHARE_RUN_MAX`] pages of the target (256 KiB: one span of a
    /// last-level table's summary bit): the run's length minus one
    /// rides in the low bits of `src` (a page address, whose low 12 bits
    /// are otherwise zero). One record, checked whole before any page is
    /// mapped. `pages` outside 1..=`SHARE_RUN_MAX` gives a record the
    /// kernel refuses (`BadAddress`).
    pub const fn share_run(va: u64, src: u64, flags: u64, pages: u64) -> MapEntry {
        let len = if pages >= 1 && pages <= SHARE_RUN_MAX { pages - 1 } else { 0xfff };
        MapEntry { va, frame_slot: crate::SHARE, flags, src: src | len }
    }

    /// A share record's source page and page count (`None`: bits of `src`
    /// that are neither, which the kernel refuses).
    pub const fn share_source(&self) -> Option<(u64, u64)> {
        let low = self.src & (crate::layout::PAGE_SIZE - 1);
        if low >= SHARE_RUN_MAX { None } else { Some((self.src - low, low + 1)) }
    }

    /// Map at `va`, in place of whatever is mapped there, a new frame owned
    /// by the target holding a copy of the page the caller maps at `src`.
    pub const fn copy(va: u64, src: u64, flags: u64) -> MapEntry {
        MapEntry { va, frame_slot: crate::COPY, flags, src }
    }

    /// Map at `va` a fresh zeroed frame owned by the target.
    pub const fn fresh(va: u64, flags: u64) -> MapEntry {
        MapEntry { va, frame_slot: crate::FRESH, flags, src: 0 }
    }
}

/// One row of the exposed environment table (`layout::ENV_TABLE`), indexed
/// by the low 10 bits of the id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct EnvEntry {
    /// The id, or 0 if the row is empty.
    pub id: u32,
    /// [`ENV_FREE`], [`ENV_CREATED`], [`ENV_RUNNABLE`], [`ENV_RUNNING`],
    /// [`ENV_WAITING`], [`ENV_SLEEPING`], [`ENV_ZOMBIE`].
    pub status: u32,
    /// Who created it (0 for boot programs).
    pub parent: u32,
    /// Frames it owns.
    pub frames: u32,
    /// Times it was given the CPU.
    pub runs: u64,
    /// Frames still owed to a revocation request.
    pub revoke_pending: u32,
    /// Frames taken from it by the abort protocol, ever.
    pub repossessed: u32,
    /// Program name, NUL-padded.
    pub name: [u8; 16],
    /// For an [`ENV_ZOMBIE`]: how it ended — its `env_exit` word (the
    /// [`EXIT_PROGRAM_BITS`] of it: the code in the low 32 bits, as `i32`),
    /// or [`EXIT_KILLED`] plus the CPU vector when the kernel destroyed it.
    pub exit_status: u64,
    /// The resource account it is charged to (0: the root account of the
    /// boot programs); see `env_limit` and `account_info`. Environments
    /// with the same value share one budget.
    pub account: u32,
    /// Kernel frames its mappings made, beyond the page-table root that
    /// comes with the environment: page tables, and its application area
    /// once made (`app_area_make`), charged to its account beside
    /// `frames` until its teardown is finished.
    pub tables: u32,
}

/// `account_info` kind: frames (owned frames, one page-table root per
/// environment, and the kernel frames its mappings made — the
/// `frames + tables + 1` of each environment-table row charged there,
/// including destroyed environments whose teardown is not finished).
pub const ACCOUNT_FRAMES: u64 = 0;
/// `account_info` kind: environments.
pub const ACCOUNT_ENVS: u64 = 1;
/// `account_info` kind: CPU time slots owned.
pub const ACCOUNT_SLOTS: u64 = 2;
/// `account_info` kind: bytes of kernel heap the kernel keeps for the
/// account's environments (their records, capability lists, predicates,
/// templates and filters, and XN cache entries; see `env_limit_heap`).
pub const ACCOUNT_HEAP: u64 = 3;
/// An account limit that never binds (the root account's).
pub const ACCOUNT_UNLIMITED: u64 = u64::MAX;

/// Empty table row.
pub const ENV_FREE: u32 = 0;
/// Created, not yet runnable.
pub const ENV_CREATED: u32 = 1;
/// Waiting for the CPU.
pub const ENV_RUNNABLE: u32 = 2;
/// On the CPU now.
pub const ENV_RUNNING: u32 = 3;
/// Waiting for the reply to a synchronous protected control transfer.
pub const ENV_WAITING: u32 = 4;
/// Sleeping until one of its wakeup predicates holds.
pub const ENV_SLEEPING: u32 = 5;
/// Ended; everything it owned is released, but its row (id, exit status)
/// stays until its creator reaps it with `env_reap` (or dies).
pub const ENV_ZOMBIE: u32 = 6;
/// `exit_status` bit set when the kernel destroyed the environment (a
/// fault with no handler, an overrun, `env_destroy`); the low byte is the
/// CPU vector, or 0xff when no vector applies.
pub const EXIT_KILLED: u64 = 1 << 32;
/// The bits of an `env_exit` word the kernel keeps in `exit_status`: the
/// program's code (bits 0–31, read as `i32`) and 15 bits of its own (33–47)
/// the kernel stores without reading them — the libOS marks there a death
/// by a signal's default action. [`EXIT_KILLED`] is the kernel's alone.
pub const EXIT_PROGRAM_BITS: u64 = 0x0000_fffe_ffff_ffff;

const _: () = assert!(EXIT_PROGRAM_BITS & EXIT_KILLED == 0);

const _: () = assert!(core::mem::size_of::<EnvEntry>() == 64);
const _: () = assert!(core::mem::size_of::<Regs>() == 18 * 8);
const _: () = assert!(core::mem::offset_of!(EnvState, fpu).is_multiple_of(16));
const _: () = assert!(core::mem::size_of::<EnvState>().is_multiple_of(16));
const _: () = assert!(
    core::mem::size_of::<EnvState>()
        == 16
            + 18 * 8
            + 8 * crate::upcall::KINDS
            + 16
            + 512
            + (3 + 18) * 8
            + crate::PREDICATES * (8 + 8 * crate::pred::PARAMS + crate::pred::MAX_BYTES)
            + 8
);

/// Records `env_mappings` writes per call at most.
pub const MAPPINGS_MAX: u64 = 64;

/// One mapping of an environment's address space (`env_mappings`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Mapping {
    /// Page address.
    pub va: u64,
    /// The page-table entry's flag bits (`layout::pte`), address cleared.
    pub flags: u64,
    /// The frame number mapped there.
    pub frame: u64,
}
