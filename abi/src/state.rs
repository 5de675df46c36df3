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

/// An environment's complete user-visible state (`env_get_state`,
/// `env_set_state`). A call in progress is part of `regs`: restartable calls
/// leave `rip` on their `syscall` with advanced arguments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct EnvState {
    /// General registers, `rip` and `rflags`.
    pub regs: Regs,
    /// Upcall entries by kind (see [`crate::upcall`]); 0 = none.
    pub upcalls: [u64; crate::upcall::KINDS],
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
    /// The interrupted registers; the handler resumes from them.
    pub regs: Regs,
}

/// One record of `page_batch`: a map, an unmap, a protect or a share,
/// chosen by `frame_slot`. Build records with the constructors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct MapEntry {
    /// Page address in the target environment.
    pub va: u64,
    /// Frame capability slot (a map), or [`UNMAP`](crate::UNMAP),
    /// [`PROTECT`](crate::PROTECT) or [`SHARE`](crate::SHARE).
    pub frame_slot: u64,
    /// Page flags for map, protect and share.
    pub flags: u64,
    /// For a protect that adds write: the capability slot presented for the
    /// frame (see `page_protect`). For a share: the page address in the
    /// caller's own space whose frame is shared. Unused otherwise.
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

    /// Map at `va` the frame the caller itself maps at `src`.
    pub const fn share(va: u64, src: u64, flags: u64) -> MapEntry {
        MapEntry { va, frame_slot: crate::SHARE, flags, src }
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
    /// For an [`ENV_ZOMBIE`]: how it ended — its `env_exit` code (low 32
    /// bits, as `i32`), or [`EXIT_KILLED`] plus the CPU vector when the kernel
    /// destroyed it.
    pub exit_status: u64,
    /// The resource account it is charged to (0: the root account of the
    /// boot programs); see `env_limit` and `account_info`. Environments
    /// with the same value share one budget.
    pub account: u32,
    /// Page-table frames its mappings made (beyond the root and the tables
    /// of its application area, which come with the environment), charged
    /// to its account beside `frames` until its teardown is finished.
    pub tables: u32,
}

/// `account_info` kind: frames (owned frames, one application-area frame
/// per environment, and the page-table frames its mappings made — the
/// `frames + tables + 1` of each environment-table row charged there,
/// including destroyed environments whose teardown is not finished).
pub const ACCOUNT_FRAMES: u64 = 0;
/// `account_info` kind: environments.
pub const ACCOUNT_ENVS: u64 = 1;
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

const _: () = assert!(core::mem::size_of::<EnvEntry>() == 64);
const _: () = assert!(core::mem::size_of::<Regs>() == 18 * 8);
