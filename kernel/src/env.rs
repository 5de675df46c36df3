//! Environments: Xok's unit of protection — an address space, a saved user
//! register state, upcall entry points, a capability list and an
//! application area — and the table that holds them.

use crate::account;
use crate::arch::trapframe::TrapFrame;
use crate::mem::access::KernelFrame;
use crate::mem::exposed;
use crate::mem::frame;
use crate::mem::paging::AddressSpace;
use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, Ordering};
use oxok_abi::frames::OWNER_FIRST_ENV;
use oxok_abi::{CAP_SLOTS, ENV_CREATED, EnvEntry, Error};
use oxok_cap::{Cap, CapList, Name, Rights};

/// Most environments alive at once (the exposed table's rows).
pub const MAX_ENVS: usize = oxok_abi::layout::ENV_TABLE_ROWS;
/// An environment id, a type of its own: `generation << 10 | row`,
/// encoded and decoded only by [`oxok_abi::env_id`] (from a word a program
/// passed: `EnvId::decode`, in the argument classes). Generations start at 1, so every id is
/// ≥ `OWNER_FIRST_ENV`, and a row's next environment gets a new id (stale
/// capabilities and ids stop matching). Generations never wrap: a
/// row whose generation reached [`gen_limit`] is retired for good, so no
/// capability or id naming an environment of the past can ever match a new
/// one.
pub use oxok_abi::env_id::EnvId;

/// Highest generation an environment-table row may reach (22 bits).
pub const MAX_GENERATION: u32 = oxok_abi::env_id::MAX_GENERATION;

static GEN_LIMIT: AtomicU32 = AtomicU32::new(MAX_GENERATION);

/// The generation at which a row is retired ([`MAX_GENERATION`] unless the
/// `gen_limit=` test aid narrowed it).
pub fn gen_limit() -> u32 {
    GEN_LIMIT.load(Ordering::Relaxed)
}

/// Narrows the generation limit (the `gen_limit=` command-line word, a
/// test aid so that retirement can be seen in seconds).
pub fn set_gen_limit(limit: u32) {
    GEN_LIMIT.store(limit.clamp(1, MAX_GENERATION), Ordering::Relaxed);
}

/// An empty slot of `caps` to fill: the check half of putting a
/// capability there. The list grows for it only while the kernel heap
/// keeps its reserve (`NoMemory` otherwise, or when every slot is full).
pub fn cap_vacancy(caps: &mut CapList<CAP_SLOTS>) -> Result<oxok_cap::Vacancy, Error> {
    crate::mem::heap::reserve(caps.growth())?;
    caps.vacancy().ok_or(Error::NoMemory)
}

/// [`cap_vacancy`] for a derived capability: the slot and the room for its
/// lineage (and its source's, when derived from this same list).
pub fn cap_vacancy_derived(caps: &mut CapList<CAP_SLOTS>) -> Result<oxok_cap::DerivedVacancy, Error> {
    crate::mem::heap::reserve(caps.growth_derived())?;
    caps.vacancy_derived().ok_or(Error::NoMemory)
}

/// Checks the kernel heap's room for a derivation from `caps` (the
/// source's lineage record, when it has no node yet).
pub fn derivation_room(caps: &CapList<CAP_SLOTS>) -> Result<(), Error> {
    crate::mem::heap::reserve(caps.lineage_growth(1))
}

/// The capability name guarding environment `id`.
pub fn env_name(id: EnvId) -> Name {
    Name::env(id.row() as u64, u64::from(id.generation()))
}

/// A revocation request in progress.
#[derive(Clone, Copy, Debug)]
pub struct Revocation {
    /// Frames still owed (a request for more than `u32::MAX` asks for
    /// that many: no environment owns more).
    pub owed: u32,
    /// TSC value after which the abort protocol takes them.
    pub deadline: u64,
    /// Whether the revocation upcall has been delivered.
    pub notified: bool,
}

/// One environment.
pub struct Env {
    /// Its id.
    pub id: EnvId,
    /// The environment that created it (`None` for boot programs).
    pub parent: Option<EnvId>,
    /// The program it was started from (for logs and tables).
    pub name: Box<str>,
    /// Its page tables.
    pub space: AddressSpace,
    /// Its user registers while it is not running (read with
    /// [`Env::regs`], changed through [`Env::regs_mut`], which first moves
    /// a transfer's state kept in them aside).
    regs: TrapFrame,
    /// Its capability list. Slot 0 names the environment itself, with
    /// every right, implied by its id: the list stores nothing for it
    /// (read a slot with [`Env::cap_at`]).
    pub caps: CapList<CAP_SLOTS>,
    /// Its upcall entry points and wakeup predicates, in a room made when
    /// it first asks for either (`env/handlers.rs`).
    pub handlers: Handlers,
    /// Frame of the application area (kernel-owned, mapped at `APP_AREA`),
    /// once the environment asked for it (`app_area_make`).
    pub app_area: Option<KernelFrame>,
    /// Pending revocation, if any.
    pub revoke: Option<Revocation>,
    /// Exposed-table status (`ENV_*`).
    pub status: u32,
    /// Times it was given the CPU.
    pub runs: u64,
    /// Frames the abort protocol took, ever.
    pub repossessed: u32,
    /// While serving a protected control transfer: the state it had when
    /// the call arrived (restored by `pct_reply`), in a room made when it
    /// first registered a `PCT` entry (`env/pctsave.rs`).
    pub pct: PctSave,
    /// While waiting for a synchronous call's reply: the callee.
    pub waiting_for: Option<EnvId>,
    /// The resource account it is charged to (`crate::account`): 1
    /// environment and [`Env::charged_frames`] frames, always (and until
    /// its teardown is finished, after it is destroyed).
    pub account: crate::account::AccountId,
    /// Kernel frames its mappings made, charged to `account`: page tables
    /// (the root is part of the environment charge), and its application
    /// area once made (the row's `tables`).
    pub kernel_frames: u32,
    /// Whether it is on the kernel's sleeper list (never listed twice).
    pub sleep_listed: bool,
    /// Its x87/SSE state and FS/GS bases (`crate::fpu`).
    pub ext: crate::fpu::Extended,
    /// While serving a synchronous transfer: the caller it arrived from and
    /// the call's ticket (`None` while serving an asynchronous one, or one
    /// whose reply is owed to nobody).
    pub pct_caller: Option<(EnvId, u64)>,
    /// While waiting (`waiting_for`): the ticket of the call it waits on.
    pub wait_ticket: u64,
    /// CPU time slots it owns, charged to `account`.
    pub slots: u32,
    /// Stopped by `env_stop`: never given the CPU until continued.
    pub stopped: bool,
    /// Kernel heap bytes charged to `account` for its records (see
    /// [`Env::charged`]): its own record
    /// and each predicate, template and filter (`crate::account`).
    pub heap_charged: u64,
}

/// An installed wakeup predicate: verified once, parameters changeable.
pub struct Pred {
    /// The verified program.
    pub program: oxok_pred::Program,
    /// Its parameters.
    pub params: [u64; oxok_abi::pred::PARAMS],
    /// The program as installed (first `len` bytes), for state export.
    pub code: [u8; oxok_abi::pred::MAX_BYTES],
    /// Its length in bytes.
    pub len: usize,
    /// The pages its reads walked to, one per [`PRED_HINTS`] way (by the
    /// read's place in an evaluation: the n-th read uses way n modulo the
    /// ways), read again without a walk while their mappings are unchanged:
    /// a predicate watches the same few words — a pipe's counters, a
    /// child's row, a ring's count and the clock — in the same order
    /// evaluation after evaluation, so two words never take each other's
    /// way however their pages are numbered.
    pub hints: [core::cell::Cell<crate::mem::paging::PageHint>; PRED_HINTS],
}

impl Pred {
    /// An installed predicate: `program` verified from `code[..len]`.
    pub fn new(
        program: oxok_pred::Program,
        params: [u64; oxok_abi::pred::PARAMS],
        code: [u8; oxok_abi::pred::MAX_BYTES],
        len: usize,
    ) -> Pred {
        let hints = core::array::from_fn(|_| core::cell::Cell::new(crate::mem::paging::PageHint::NONE));
        Pred { program, params, code, len, hints }
    }

    /// The hint for an evaluation's `nth` read.
    fn hint(&self, nth: usize) -> &core::cell::Cell<crate::mem::paging::PageHint> {
        &self.hints[nth % PRED_HINTS]
    }
}

/// Pages a predicate remembers the translation of.
pub const PRED_HINTS: usize = 4;

impl Env {
    /// Its user registers while it is not running.
    pub fn regs(&self) -> &TrapFrame {
        &self.regs
    }

    /// Its user registers, to change: the state a transfer it serves
    /// interrupted, if still kept in them, is first copied aside
    /// ([`PctSave::spill`]).
    #[inline(always)]
    pub fn regs_mut(&mut self) -> &mut TrapFrame {
        self.pct.spill(&self.regs);
        &mut self.regs
    }

    /// Saves `frame` as its user registers ([`Env::regs_mut`]'s spill
    /// first, then one copy straight into place).
    #[inline(always)]
    pub fn save_regs(&mut self, frame: &TrapFrame) {
        self.pct.spill(&self.regs);
        self.regs.copy_from(frame);
    }

    /// The state a transfer it serves interrupted, if it serves one.
    pub fn pct_saved(&self) -> Option<&TrapFrame> {
        self.pct.saved(&self.regs)
    }

    /// Ends serving a transfer: the state it interrupted becomes its
    /// registers again. `false`, nothing changed, if it serves none.
    pub fn pct_restore(&mut self) -> bool {
        self.pct.restore_into(&mut self.regs)
    }

    /// Starts serving a transfer that interrupted its registers as they
    /// are, kept in place until they change. `false`, nothing changed,
    /// without the room a `PCT` entry comes with.
    pub fn pct_keep(&mut self) -> bool {
        self.pct.keep_in_place()
    }

    /// Its own capability: its name, every right (slot 0's, from creation).
    pub fn own_cap(&self) -> Cap {
        Cap::new(env_name(self.id), Rights::ALL)
    }

    /// The capability in its slot `slot` (a copy), slot 0's implied own
    /// capability included. Errors as `CapList::get`.
    pub fn cap_at(&self, slot: u64) -> Result<Cap, oxok_cap::CapError> {
        self.caps.source(slot, Some(&self.own_cap()))
    }

    /// Evaluates the predicates named by `mask` in predicate-index order, reading
    /// through this environment's own page tables: the first that holds, or
    /// `Err(addr)` for the first read it was not allowed to make.
    pub fn first_true(&self, mask: u64) -> Result<Option<usize>, u64> {
        let preds = self.handlers.preds();
        let mut left = mask;
        while left != 0 {
            let i = left.trailing_zeros() as usize;
            left &= left - 1;
            let Some(p) = preds.get(i).and_then(|pred| pred.as_deref()) else { continue };
            let mut nth = 0;
            let mut read = |addr: u64, size: u8| {
                let hint = p.hint(nth);
                nth += 1;
                crate::mem::user::read_word_hinted(&self.space, hint, addr, size)
            };
            match p.program.eval(&p.params, &mut read) {
                Ok(true) => return Ok(Some(i)),
                Ok(false) => {}
                Err(oxok_pred::EvalError::BadRead(addr)) => return Err(addr),
            }
        }
        Ok(None)
    }
}

impl Env {
    /// How many frames it owns (allocated with `frame_alloc` or by its
    /// loader, or fresh for a mapping): its row's list in the frame
    /// allocator (`oxok_hw::mem::frame`).
    pub fn owned_frames(&self) -> u64 {
        frame::with(|f| f.owned_count(self.id.row())) as u64
    }

    /// Frames charged to its account for it: those it owns, its
    /// page-table root and the kernel frames its mappings made (tables,
    /// the application area).
    pub fn charged_frames(&self) -> u64 {
        self.owned_frames() + ENV_FRAMES + u64::from(self.kernel_frames)
    }

    /// Everything charged to its account for it: frames, itself, its CPU
    /// slots and its kernel heap.
    pub fn charged(&self) -> oxok_account::Amount {
        oxok_account::Amount::new(self.charged_frames(), 1)
            .with_slots(u64::from(self.slots))
            .with_heap(self.heap_charged)
    }

    /// Refreshes the `frames` field of its row of the exposed environment
    /// table: after it gained or lost an owned frame and nothing else
    /// changed.
    pub fn publish_frames(&self) {
        exposed::set_env_frames(self.id.row(), self.owned_frames() as u32);
    }

    /// Refreshes its row of the exposed environment table.
    pub fn publish(&self) {
        let mut name = [0u8; 16];
        let n = self.name.len().min(15);
        name[..n].copy_from_slice(&self.name.as_bytes()[..n]);
        exposed::set_env_row(
            self.id.row(),
            EnvEntry {
                id: self.id.raw(),
                status: self.status,
                parent: self.parent.map_or(0, EnvId::raw),
                frames: self.owned_frames() as u32,
                runs: self.runs,
                revoke_pending: self.revoke.map_or(0, |r| r.owed),
                repossessed: self.repossessed,
                name,
                exit_status: 0,
                account: self.account,
                tables: self.kernel_frames,
            },
        );
    }
}

struct Row {
    generation: u32,
    env: Option<Box<Env>>,
    /// An ended environment's row, kept until its creator reaps it.
    zombie: Option<EnvEntry>,
    /// The account that zombie keeps charged with one environment once
    /// its teardown is over (until then the teardown's own charge holds
    /// it): a row is a table entry like a live one, so a program cannot
    /// fill the table with children it lets die and never reaps.
    held: Option<account::AccountId>,
    /// Its last environment is still being torn down: the row is not
    /// reused until that is finished (so at most `MAX_ENVS` are dying).
    tearing: bool,
}

impl Row {
    /// Drops the row's zombie and gives back the environment it held
    /// charged, if its teardown is over ([`Row::held`]).
    fn free_zombie(&mut self) {
        self.zombie = None;
        if let Some(acct) = self.held.take() {
            account::uncharge_amount(acct, oxok_account::Amount::new(0, 1));
            account::with(|a| a.detach(acct));
        }
    }
}

/// Two live environments and their CPU ledgers ([`EnvTable::pair`]).
pub struct Pair<'a> {
    /// The one giving up the CPU.
    pub from: &'a mut Env,
    /// The one taking it.
    pub to: &'a mut Env,
    /// `from`'s CPU ledger.
    pub from_ledger: &'a mut oxok_slots::CpuLedger,
    /// `to`'s CPU ledger.
    pub to_ledger: &'a mut oxok_slots::CpuLedger,
}

/// A destroyed environment whose resources are still being released; its
/// account stays charged (1 environment, `frames` frames) until then.
struct Dying {
    id: EnvId,
    space: AddressSpace,
    cursor: u64,
    app_area: Option<KernelFrame>,
    account: account::AccountId,
    frames: u64,
    /// Kernel heap bytes still charged (see [`Env::charged`]).
    heap: u64,
}

/// Last-level page tables the reaper tears down per kernel entry: bounds
/// the time any one entry spends tearing down destroyed environments.
pub const REAP_BUDGET: usize = 64;

/// Frames every environment is charged for itself: its page-table root
/// (published in the system-information page as `env_frames`).
pub const ENV_FRAMES: u64 = 1;

/// Kernel heap every environment is charged for itself beyond its record:
/// in the process model its kernel stack, nothing in the interrupt model.
#[cfg(feature = "model-process")]
const KSTACK_HEAP: u64 = crate::model::KSTACK_HEAP;
#[cfg(not(feature = "model-process"))]
const KSTACK_HEAP: u64 = 0;

/// All environments, by row, and those being torn down.
pub struct EnvTable {
    /// One per possible row: an id's row (its low bits, masked) always
    /// indexes it, so a lookup has no bounds check.
    rows: Box<[Row; MAX_ENVS]>,
    dying: VecDeque<Dying>,
    /// Rows ever taken: they are taken lowest first, so every row from
    /// here on is empty and scans stop here (published as
    /// `SysInfo::env_rows_used`).
    rows_used: usize,
    /// The CPU ledgers: the exposed run table, a row per table row.
    run_rows: exposed::RunRows,
}

const _: () = assert!(1 << oxok_abi::env_id::ROW_BITS >= OWNER_FIRST_ENV as usize);

impl EnvTable {
    /// An empty table.
    pub fn new(run_rows: exposed::RunRows) -> EnvTable {
        let mut rows = Vec::with_capacity(MAX_ENVS);
        rows.resize_with(MAX_ENVS, || Row { generation: 0, env: None, zombie: None, held: None, tearing: false });
        let Ok(rows) = rows.into_boxed_slice().try_into() else { unreachable!("MAX_ENVS rows made") };
        // Rows stay taken while torn down, so this never grows.
        EnvTable { rows, dying: VecDeque::with_capacity(MAX_ENVS), rows_used: 0, run_rows }
    }

    /// Creates an environment: empty address space (its root table) and an
    /// empty capability list whose slot 0, its own capability, is implied
    /// by its id. It is charged (1 environment, 1 frame for the root) to
    /// its creator's account, or to the root account for boot programs
    /// (`parent` none).
    pub fn create(&mut self, name: &str, parent: Option<EnvId>) -> Result<EnvId, Error> {
        let account = parent.and_then(|p| self.get(p)).map_or(account::ROOT, |p| p.account);
        let charge = account::Charge::amount(account, oxok_account::Amount::new(1, 1).with_heap(account::ENV_HEAP))?;
        #[cfg(feature = "model-process")]
        let kstack = crate::model::stack_for(account)?;
        let id = self.build(name, parent, account)?;
        #[cfg(feature = "model-process")]
        crate::model::attach(id, kstack);
        charge.commit();
        let _ = account::with(|a| a.attach(account));
        Ok(id)
    }

    fn build(&mut self, name: &str, parent: Option<EnvId>, account: account::AccountId) -> Result<EnvId, Error> {
        crate::mem::heap::reserve(size_of::<Env>() + account::CAP_LIST_HEAP + 1024)?;
        let limit = gen_limit();
        let index = self
            .rows
            .iter()
            .position(|s| s.env.is_none() && s.zombie.is_none() && !s.tearing && s.generation < limit)
            .ok_or(Error::NoMemory)?;
        // Owners free what they hold when dropped: a refusal below gives
        // the space's root back by itself.
        let space = AddressSpace::new()?;
        // Below the limit (checked above), so this never wraps.
        let generation = self.rows[index].generation + 1;
        // Generation below the limit and row below `MAX_ENVS`: in range.
        let id = EnvId::of(generation, index);
        // Its own capability, in slot 0, is implied by its id (a derivation
        // from it records only its lineage: `calls::cap::derive_in`).
        let caps = CapList::with_first_implied();
        let row = &mut self.rows[index];
        row.generation = generation;
        if index >= self.rows_used {
            self.rows_used = index + 1;
            exposed::update_sysinfo(|i| i.env_rows_used = self.rows_used as u64);
        }
        if generation >= limit {
            log::info!("environment-table row {index} reached generation {limit}: retired after this environment");
        }
        let env = Box::new(Env {
            id,
            parent,
            name: Box::from(name),
            space,
            regs: TrapFrame::new_user(0, 0),
            caps,
            handlers: Handlers::new(),
            app_area: None,
            revoke: None,
            status: ENV_CREATED,
            runs: 0,
            repossessed: 0,
            pct: PctSave::new(),
            waiting_for: None,
            account,
            kernel_frames: 0,
            sleep_listed: false,
            ext: crate::fpu::Extended::new(),
            pct_caller: None,
            wait_ticket: 0,
            slots: 0,
            stopped: false,
            heap_charged: account::ENV_HEAP + KSTACK_HEAP,
        });
        env.publish();
        // Its CPU ledger (debt, strikes, run statistics) is its row of the
        // exposed run table, changed only by the scheduler (`EnvTable::ledger`).
        if let Some(ledger) = self.run_rows.get_mut(index) {
            *ledger = oxok_slots::CpuLedger { env: id.raw(), ..Default::default() };
        }
        row.env = Some(env);
        publish_heap();
        Ok(id)
    }

    /// The environment with this id, if it is alive.
    #[inline]
    pub fn get(&mut self, id: EnvId) -> Option<&mut Env> {
        let row = &mut self.rows[id.row()];
        row.env.as_deref_mut().filter(|e| e.id == id)
    }

    /// Two different live environments and their CPU ledgers, to change
    /// together (a hand-off of the CPU from `a` to `b`): `None` if either
    /// is not alive or they are one.
    #[inline(always)]
    pub fn pair(&mut self, a: EnvId, b: EnvId) -> Option<Pair<'_>> {
        let [ra, rb] = self.rows.get_disjoint_mut([a.row(), b.row()]).ok()?;
        let from = ra.env.as_deref_mut().filter(|e| e.id == a)?;
        let to = rb.env.as_deref_mut().filter(|e| e.id == b)?;
        let (from_ledger, to_ledger) = self.run_rows.pair_mut(a.row(), b.row())?;
        Some(Pair { from, to, from_ledger, to_ledger })
    }

    /// The environment whose id's number is `n` (as an atomic word keeps
    /// an id: [`EnvId::raw`]), if it is alive.
    #[inline]
    pub fn by_number(&mut self, n: u32) -> Option<&mut Env> {
        // Only a live environment's own number matches (0 and other
        // numbers no environment has never do): no decode needed.
        let row = &mut self.rows[oxok_abi::env_id::row(u64::from(n))];
        row.env.as_deref_mut().filter(|e| e.id.raw() == n)
    }

    /// The live environment in table row `row`, if any.
    pub fn by_row(&mut self, row: usize) -> Option<&mut Env> {
        self.rows.get_mut(row)?.env.as_deref_mut()
    }

    /// True if `id` names a live environment.
    #[inline]
    pub fn alive(&self, id: EnvId) -> bool {
        self.rows[id.row()].env.as_ref().is_some_and(|e| e.id == id)
    }

    /// Removes the environment at once (its id is dead from here on: its
    /// capabilities stop matching, it never runs again) and queues the
    /// release of everything it owns for [`Self::reap`], which works in
    /// bounded steps: its mappings, page tables, application area, and every
    /// frame it owns — or, for a frame another environment still maps,
    /// hands it to the orphan owner so the last unmapping frees it. Its
    /// account stays charged, and its table row taken, until that is done.
    ///
    /// If its creator is alive, its row stays as an `ENV_ZOMBIE` with
    /// `status` until the creator reaps it ([`Self::take_zombie`]). Zombies
    /// it created itself are freed.
    pub fn destroy(&mut self, id: EnvId, status: u64) -> Result<(), Error> {
        let row = self.rows.get_mut(id.row()).ok_or(Error::BadEnv)?;
        if row.env.as_ref().is_none_or(|e| e.id != id) {
            return Err(Error::BadEnv);
        }
        let Some(env) = row.env.take() else { return Err(Error::BadEnv) };
        let parent = env.parent;
        let row_index = id.row();
        if let Some(ledger) = self.run_rows.get_mut(row_index) {
            *ledger = oxok_slots::CpuLedger::default();
        }
        let frames = env.charged_frames();
        let heap = env.charged().heap;
        let Env { space, app_area, caps, name, runs, account, .. } = *env;
        for (_, cap) in caps.iter() {
            count_frame_ref(cap, -1);
        }
        space.deactivate();
        // Rows are taken while dying, so there is always room: the queue
        // was reserved for every row at boot and never grows.
        row.tearing = true;
        if self.dying.len() < self.dying.capacity() || self.dying.try_reserve(1).is_ok() {
            // Newest first: the budget below finishes a small one at once.
            self.dying.push_front(Dying { id, space, cursor: 0, app_area, account, frames, heap });
        } else {
            log::error!("env {id}: no room to queue its teardown");
        }
        if let Some(parent) = parent.filter(|&p| self.alive(p)) {
            let mut row_name = [0u8; 16];
            let n = name.len().min(15);
            row_name[..n].copy_from_slice(&name.as_bytes()[..n]);
            let row = EnvEntry {
                id: id.raw(),
                status: oxok_abi::ENV_ZOMBIE,
                parent: parent.raw(),
                runs,
                name: row_name,
                exit_status: status,
                ..EnvEntry::default()
            };
            exposed::set_env_row(row_index, row);
            if let Some(s) = self.rows.get_mut(row_index) {
                s.zombie = Some(row);
            }
        } else {
            exposed::set_env_row(row_index, EnvEntry::default());
        }
        // Its own unreaped children have nobody to reap them now.
        for (i, s) in self.rows[..self.rows_used].iter_mut().enumerate() {
            if s.zombie.is_some_and(|z| z.parent == id.raw()) {
                s.free_zombie();
                exposed::set_env_row(i, EnvEntry::default());
            }
        }
        self.reap(REAP_BUDGET);
        Ok(())
    }

    /// Reaps ended environment `id` for its creator `parent`: its exit
    /// status; the row is freed.
    pub fn take_zombie(&mut self, parent: EnvId, id: EnvId) -> Result<u64, Error> {
        let index = id.row();
        let row = self.rows.get_mut(index).ok_or(Error::BadEnv)?;
        if row.env.as_ref().is_some_and(|e| e.id == id) {
            return Err(Error::Busy);
        }
        match row.zombie {
            Some(z) if z.id == id.raw() && z.parent == parent.raw() => {
                row.free_zombie();
                exposed::set_env_row(index, EnvEntry::default());
                Ok(z.exit_status)
            }
            Some(z) if z.id == id.raw() => Err(Error::Denied),
            _ => Err(Error::BadEnv),
        }
    }

    /// Ids of the live environments for which `f` holds.
    pub fn ids_where(&self, mut f: impl FnMut(&Env) -> bool) -> Vec<EnvId> {
        self.rows[..self.rows_used].iter().filter_map(|s| s.env.as_deref()).filter(|e| f(e)).map(|e| e.id).collect()
    }

    /// The creator recorded in ended environment `id`'s zombie row, if it
    /// has one (`env_reap` reaps on the creator's behalf).
    pub fn zombie_parent(&self, id: EnvId) -> Option<EnvId> {
        let row = self.rows.get(id.row())?;
        row.zombie.filter(|z| z.id == id.raw()).and_then(|z| EnvId::decode(u64::from(z.parent)))
    }

    /// Every live environment, in table order.
    pub fn envs_mut(&mut self) -> impl Iterator<Item = &mut Env> + '_ {
        self.rows[..self.rows_used].iter_mut().filter_map(|s| s.env.as_deref_mut())
    }

    /// Live environment `id`'s CPU ledger (its row of the exposed run
    /// table), for the scheduler.
    #[inline]
    pub fn ledger(&mut self, id: EnvId) -> Option<&mut oxok_slots::CpuLedger> {
        self.ledger_if(id, |_| true)
    }

    /// [`EnvTable::ledger`] if the environment passes `test`, in one look.
    #[inline(always)]
    pub fn ledger_if(&mut self, id: EnvId, test: impl FnOnce(&Env) -> bool) -> Option<&mut oxok_slots::CpuLedger> {
        let e = self.get(id)?;
        if !test(e) {
            return None;
        }
        let row = e.id.row();
        self.run_rows.get_mut(row)
    }

    /// Number of live environments.
    pub fn count(&self) -> usize {
        self.rows[..self.rows_used].iter().filter(|s| s.env.is_some()).count()
    }
}

/// Publishes the kernel heap's use in the system-information page.
pub fn publish_heap() {
    let (used, _) = crate::mem::heap::usage();
    exposed::update_sysinfo(|i| i.kernel_heap_used = used as u64);
}

mod handlers;
mod map;
pub mod orphans;
mod pctsave;
mod reap;
pub use handlers::Handlers;
pub use map::{map_frame, map_run, map_with};
pub use pctsave::PctSave;
pub use reap::{count_frame_ref, frame_of_cap, release_leaf, release_mapping};
