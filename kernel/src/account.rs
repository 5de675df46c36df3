//! Resource accounts: the kernel glue for `oxok_account` (see that crate
//! for the model). Every environment is charged to one account — 1
//! environment and 1 frame (its application area) when it is created, 1
//! frame per frame it owns (`frame_alloc`, `frame_alloc_for`, the loader)
//! — and uncharged when it frees a frame, when the abort protocol or
//! `EnvTable::collect` takes one, and all at once when its teardown ends.
//! Frames that outlive their owner as orphans (another environment still
//! maps them) stay charged to the owner's account until their last mapping
//! goes (`crate::env::orphans`): dying hands nothing over for free.
//!
//! A charge counts against the account and every ancestor, so an
//! environment put into a sub-account with `env_limit` — and everything it
//! creates, which is charged to its creator's account — holds at most what
//! the limits all the way up allow: a fork bomb is bounded by its parent's
//! grant (`Error::NoMemory` beyond it, nothing changed). Boot programs are
//! charged to the unlimited root account.
//!
//! Page-table frames a mapping makes are charged to the mapped
//! environment's account (`env::map_frame`); a destroyed environment stays
//! charged until its teardown is finished (`EnvTable::reap`).
//!
//! Kernel heap is charged too, in bytes (`ACCOUNT_HEAP`), for every record
//! an environment makes the kernel keep: its environment record with its
//! capability list and name ([`ENV_HEAP`], at `env_create`), each
//! predicate it installs ([`PRED_HEAP`]), a transmit template
//! ([`TEMPLATE_HEAP`]), each packet filter ([`filter_heap`]) and each
//! packet ring ([`RING_HEAP`]) — all given back when its teardown ends (a
//! filter when it is removed, a ring when it is unbound:
//! [`give_back_heap`]). An
//! owned frame costs no heap: the list of an environment's frames is
//! threaded through links the frame allocator carved out at boot, one per
//! frame. A frame of XN's buffer cache costs its account the frame and
//! [`CACHE_HEAP`] (its entry in the pool's map).
//! `env_limit_heap` makes a sub-account with a heap limit; past it the
//! call that would make the record fails with `NoMemory`. Below every
//! account, the heap keeps [`crate::mem::heap::RESERVE`] free whatever the
//! root's programs do.
//!
//! CPU time slots are charged too: 1 per slot an environment owns
//! (`slot_alloc`, a slot received by `slot_give`), given back when it frees
//! or gives the slot away and when it dies (`sched::kill`); `env_limit_slots`
//! makes a sub-account with a slot limit. CPU time itself needs no
//! account: an environment runs only in slots it owns or in spare time
//! lent round robin (`slots.rs`).

use oxok_abi::Error;
use oxok_account::{AccountError, Accounts, Amount};
use spin::Mutex;

pub use oxok_account::{AccountId, ROOT};

static ACCOUNTS: Mutex<Option<Accounts>> = Mutex::new(None);

/// Runs `f` with the account table locked (created on first use).
pub fn with<R>(f: impl FnOnce(&mut Accounts) -> R) -> R {
    let mut guard = ACCOUNTS.lock();
    let accounts = guard.get_or_insert_with(|| Accounts::new(Amount::UNLIMITED));
    f(accounts)
}

/// The ABI error for an account refusal.
pub fn error(e: AccountError) -> Error {
    match e {
        AccountError::Exceeded | AccountError::NoRoom => Error::NoMemory,
        AccountError::TooDeep => Error::Invalid,
        AccountError::NoAccount => Error::BadEnv,
    }
}

/// Moves the charge for `slots` CPU time slots from `from` to `to`, or
/// refuses with `NoMemory` and changes nothing.
pub fn transfer_slots(from: AccountId, to: AccountId, slots: u64) -> Result<(), Error> {
    with(|a| a.transfer(from, to, Amount::slots(slots))).map_err(error)
}

/// Gives back a charge for `slots` CPU time slots.
pub fn uncharge_slots(id: AccountId, slots: u64) {
    with(|a| a.uncharge(id, Amount::slots(slots)));
}

/// Allocator bookkeeping added to each heap block (the linked-list
/// allocator's rounding and header, rounded up).
const BLOCK_OVERHEAD: u64 = 48;

/// Kernel heap one environment's record costs: the [`crate::env::Env`]
/// itself, its capability list as large as it may grow (it takes its
/// memory as it fills, so growing never needs a charge of its own), its
/// name (at most 32 bytes, see `env_rename`), its FPU image (made when it
/// first becomes runnable, `fpu::Extended::make_image`), the room for a
/// served transfer's saved state (made when it first registers a `PCT`
/// entry, `env::PctSave`), the room for its upcall entries and predicates
/// (made when it first asks for either, `env::Handlers`) and their
/// allocator overhead.
pub const ENV_HEAP: u64 = (size_of::<crate::env::Env>()
    + CAP_LIST_HEAP
    + 32
    + crate::fpu::Extended::IMAGE_HEAP
    + crate::env::PctSave::HEAP
    + crate::env::Handlers::HEAP) as u64
    + 7 * BLOCK_OVERHEAD;

/// The most kernel heap a capability list takes (all its slots, each with
/// a lineage record).
pub const CAP_LIST_HEAP: usize = oxok_cap::CapList::<{ oxok_abi::CAP_SLOTS }>::MOST_BYTES;
/// Kernel heap one installed predicate costs.
pub const PRED_HEAP: u64 = size_of::<crate::env::Pred>() as u64 + BLOCK_OVERHEAD;
/// Kernel heap per frame of XN's buffer cache: its share of the pool's
/// B-tree map of frame numbers (a node of 11 entries is about 200 bytes,
/// at least half full, plus the inner nodes).
pub const CACHE_HEAP: u64 = 32;
/// Kernel heap one transmit template costs (its map node share).
pub const TEMPLATE_HEAP: u64 = 128;
/// Kernel heap one packet filter costs beyond its atoms: its table slot
/// and exposed row's share.
pub const FILTER_HEAP: u64 = 512;
/// Kernel heap an atom of a packet filter can add to the merged trie: a
/// node (and its share of the node vector's doubling), its group (a
/// vector of four at first) and a hash table of four slots, with the
/// allocator's overhead (`hostile-heap` measures a 16-atom filter).
pub const ATOM_HEAP: u64 = 640;

/// What a packet filter of `atoms` atoms is charged ([`FILTER_HEAP`] and
/// [`ATOM_HEAP`] each): a filter's trie path grows with its atoms.
pub const fn filter_heap(atoms: usize) -> u64 {
    FILTER_HEAP + atoms as u64 * ATOM_HEAP
}

/// Kernel heap one packet ring costs: its record and its list of frames
/// (at most `RING_DATA_FRAMES_MAX` of 8 bytes) with the allocator's
/// overhead.
pub const RING_HEAP: u64 = (size_of::<crate::net::ring::Ring>()
    + oxok_abi::net::RING_DATA_FRAMES_MAX * size_of::<crate::mem::access::FrameRef>())
    as u64
    + 2 * BLOCK_OVERHEAD;

/// A record environment `env` paid `bytes` of kernel heap for is gone:
/// the charge goes back to its account (a dead environment's records
/// went with it, and their charges with its teardown).
pub fn give_back_heap(env: &mut crate::env::Env, bytes: u64) {
    if env.heap_charged >= bytes {
        env.heap_charged -= bytes;
        uncharge_amount(env.account, Amount::heap(bytes));
    }
}

/// `n` owned frames.
pub fn owned(n: u64) -> Amount {
    Amount::new(n, 0)
}

/// `n` frames of XN's buffer cache: the frames and their entries in the
/// pool's map.
pub fn cached(n: u64) -> Amount {
    Amount::new(n, 0).with_heap(n.saturating_mul(CACHE_HEAP))
}

/// Charges `amount` to `id` and its ancestors, or nothing (`NoMemory`).
pub fn charge_amount(id: AccountId, amount: Amount) -> Result<(), Error> {
    with(|a| a.charge(id, amount)).map_err(error)
}

/// Charges `n` frames to `id` and its ancestors, or nothing (`NoMemory`):
/// the account table's frames-only short path.
pub fn charge_frames(id: AccountId, n: u64) -> Result<(), Error> {
    with(|a| a.charge_frames(id, n)).map_err(error)
}

/// Gives back `n` frames (owned ones, [`owned`], or page tables).
pub fn uncharge_frames(id: AccountId, n: u64) {
    with(|a| a.uncharge_frames(id, n));
}

/// Gives back what [`charge_amount`] took.
pub fn uncharge_amount(id: AccountId, amount: Amount) {
    with(|a| a.uncharge(id, amount));
}

/// A charge that is given back when dropped unless [`Charge::commit`]
/// keeps it: an operation charges first, and every early return after
/// that (a failed allocation, a full list) uncharges by itself.
#[must_use = "a charge not committed is given back at once"]
pub struct Charge {
    id: AccountId,
    amount: Amount,
}

impl Charge {
    /// Charges `slots` CPU time slots to `id` and its ancestors, given
    /// back on drop unless committed.
    pub fn slots(id: AccountId, slots: u64) -> Result<Charge, Error> {
        let amount = Amount::slots(slots);
        with(|a| a.charge(id, amount)).map_err(error)?;
        Ok(Charge { id, amount })
    }

    /// Charges `amount` to `id`, given back on drop unless committed. A
    /// zero amount touches no account (the common case of a mapping that
    /// needs no new page table).
    pub fn amount(id: AccountId, amount: Amount) -> Result<Charge, Error> {
        if amount != Amount::default() {
            with(|a| a.charge(id, amount)).map_err(error)?;
        }
        Ok(Charge { id, amount })
    }

    /// Charges one owned frame ([`owned`]) to `id` (the frames-only
    /// short path of the account table: every page fault's path takes it).
    pub fn owned(id: AccountId) -> Result<Charge, Error> {
        charge_frames(id, 1)?;
        Ok(Charge { id, amount: owned(1) })
    }

    /// Charges one frame of XN's buffer cache ([`cached`]) to `id`.
    pub fn cached(id: AccountId) -> Result<Charge, Error> {
        Charge::amount(id, cached(1))
    }

    /// Charges `frames` frames to `id`, given back on drop unless
    /// committed.
    pub fn frames(id: AccountId, frames: u64) -> Result<Charge, Error> {
        Charge::amount(id, Amount::new(frames, 0))
    }

    /// Keeps the charge: the operation succeeded and the account now pays.
    pub fn commit(self) {
        core::mem::forget(self);
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        if self.amount != Amount::default() {
            with(|a| a.uncharge(self.id, self.amount));
        }
    }
}

/// True if account `inner` is `outer` or nested inside it. An account is
/// within itself without a look at the table: every caller passes
/// accounts of live environments, which stay live while charged.
pub fn within(inner: AccountId, outer: AccountId) -> bool {
    inner == outer || with(|a| a.within(inner, outer))
}

const _: () = assert!(oxok_account::MAX_DEPTH as u64 == oxok_abi::ACCOUNT_MAX_DEPTH);
const _: () = assert!(oxok_account::UNLIMITED == oxok_abi::ACCOUNT_UNLIMITED);
// An environment's record is what a heap limit mostly counts: keep it
// known and bounded (a change of `Env` that grows it shows here).
const _: () = assert!(ENV_HEAP < 16 * 1024);
