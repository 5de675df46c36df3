//! Nested resource accounts: how Oxok bounds what a group of environments
//! may hold (a fork bomb is bounded by what its parent gave it).
//!
//! Xok's answer to "who pays for this frame" is that every frame has an
//! owner (Xok §3, Aegis §3.3: frames are revocable, an environment holds
//! what it was granted). Ownership alone does not bound a group that keeps
//! creating new owners, so each environment is also charged to an
//! *account* with a frame limit and an environment limit. Accounts nest: a
//! charge to an account counts against it **and every ancestor**, so a
//! sub-account can never hold more than its parent allows, whatever limits
//! it was given. No policy lives here: the kernel charges and uncharges,
//! user code (through `env_limit`) only ever creates narrower accounts.
//!
//! `no_std`, no `unsafe`, no panics on anything a caller controls. Account
//! ids may come from anywhere: an unknown id is `NoAccount`, never a panic.
//! Freed rows go on an intrusive free list, so releasing never allocates.
#![no_std]

extern crate alloc;

use alloc::vec::Vec;

/// An account's index in the table.
pub type AccountId = u32;
/// The root account: everything the kernel starts at boot; never freed.
pub const ROOT: AccountId = 0;
/// Deepest nesting allowed below the root.
pub const MAX_DEPTH: u32 = 8;
/// A limit that never binds.
pub const UNLIMITED: u64 = u64::MAX;

/// An amount of the resources accounts count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Amount {
    /// Physical frames.
    pub frames: u64,
    /// Environments.
    pub envs: u64,
    /// CPU time slots of the slot vector.
    pub slots: u64,
    /// Bytes of kernel heap (the kernel's records for the environments:
    /// environment records, capability lists, predicates, …).
    pub heap: u64,
}

impl Amount {
    /// `frames` frames and `envs` environments (no slots).
    pub const fn new(frames: u64, envs: u64) -> Amount {
        Amount { frames, envs, slots: 0, heap: 0 }
    }

    /// `slots` time slots (nothing else).
    pub const fn slots(slots: u64) -> Amount {
        Amount { frames: 0, envs: 0, slots, heap: 0 }
    }

    /// `bytes` bytes of kernel heap (nothing else).
    pub const fn heap(bytes: u64) -> Amount {
        Amount { frames: 0, envs: 0, slots: 0, heap: bytes }
    }

    /// The same amount with `bytes` bytes of kernel heap.
    pub const fn with_heap(self, bytes: u64) -> Amount {
        Amount { heap: bytes, ..self }
    }

    /// The same frames and environments with `slots` slots.
    pub const fn with_slots(self, slots: u64) -> Amount {
        Amount { slots, ..self }
    }

    /// No limit at all.
    pub const UNLIMITED: Amount = Amount::new(UNLIMITED, UNLIMITED).with_slots(UNLIMITED).with_heap(UNLIMITED);

    fn fits(self, limit: Amount) -> bool {
        self.frames <= limit.frames && self.envs <= limit.envs && self.slots <= limit.slots && self.heap <= limit.heap
    }

    fn min(self, o: Amount) -> Amount {
        Amount {
            frames: self.frames.min(o.frames),
            envs: self.envs.min(o.envs),
            slots: self.slots.min(o.slots),
            heap: self.heap.min(o.heap),
        }
    }

    fn checked_add(self, o: Amount) -> Option<Amount> {
        Some(Amount {
            frames: self.frames.checked_add(o.frames)?,
            envs: self.envs.checked_add(o.envs)?,
            slots: self.slots.checked_add(o.slots)?,
            heap: self.heap.checked_add(o.heap)?,
        })
    }

    fn saturating_sub(self, o: Amount) -> Amount {
        Amount {
            frames: self.frames.saturating_sub(o.frames),
            envs: self.envs.saturating_sub(o.envs),
            slots: self.slots.saturating_sub(o.slots),
            heap: self.heap.saturating_sub(o.heap),
        }
    }
}

/// Why an operation was refused (nothing changed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccountError {
    /// A limit somewhere up the chain would be exceeded.
    Exceeded,
    /// The new account would be deeper than [`MAX_DEPTH`].
    TooDeep,
    /// No live account has this id.
    NoAccount,
    /// The table could not grow (memory).
    NoRoom,
}

/// One account.
#[derive(Clone, Copy, Debug)]
struct Account {
    parent: AccountId,
    depth: u32,
    limit: Amount,
    /// Everything charged here or to any descendant.
    used: Amount,
    /// Environments charged directly here plus live child accounts.
    refs: u32,
    live: bool,
    /// Next free row while on the free list.
    next_free: Option<AccountId>,
}

/// What [`Accounts::info`] reports about one account.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Info {
    /// Charged here or below.
    pub used: Amount,
    /// Its own limits (an ancestor's may bind first).
    pub limit: Amount,
    /// 0 for the root.
    pub depth: u32,
    /// Its parent (the root names itself).
    pub parent: AccountId,
}

/// The table of accounts.
pub struct Accounts {
    table: Vec<Account>,
    free: Option<AccountId>,
}

impl Accounts {
    /// A table holding only the root account, limited by `root_limit`.
    pub fn new(root_limit: Amount) -> Accounts {
        let root = Account {
            parent: ROOT,
            depth: 0,
            limit: root_limit,
            used: Amount::default(),
            refs: 0,
            live: true,
            next_free: None,
        };
        Accounts { table: alloc::vec![root], free: None }
    }

    fn get(&self, id: AccountId) -> Result<&Account, AccountError> {
        self.table.get(id as usize).filter(|a| a.live).ok_or(AccountError::NoAccount)
    }

    /// The chain from `id` up to the root, as ids (at most `MAX_DEPTH + 1`).
    fn chain(&self, id: AccountId) -> Result<impl Iterator<Item = AccountId> + '_, AccountError> {
        let first = self.get(id)?;
        let mut next = Some(id);
        let mut left = first.depth + 1;
        Ok(core::iter::from_fn(move || {
            let cur = next?;
            left = left.checked_sub(1)?;
            next = self.table.get(cur as usize).filter(|a| a.depth > 0).map(|a| a.parent);
            Some(cur)
        }))
    }

    /// Charges `amount` to `id` and every ancestor, or to none of them.
    pub fn charge(&mut self, id: AccountId, amount: Amount) -> Result<(), AccountError> {
        for a in self.chain(id)? {
            let acct = &self.table[a as usize];
            let after = acct.used.checked_add(amount).ok_or(AccountError::Exceeded)?;
            if !after.fits(acct.limit) {
                return Err(AccountError::Exceeded);
            }
        }
        // Checked above: every account of the chain has room.
        self.add(id, amount);
        Ok(())
    }

    /// Charges `frames` frames to `id` and its ancestors, or nothing: the
    /// same as [`Accounts::charge`] with `Amount::new(frames, 0)`, on the
    /// one field it changes (a page fault's path charges a frame).
    pub fn charge_frames(&mut self, id: AccountId, frames: u64) -> Result<(), AccountError> {
        for a in self.chain(id)? {
            let acct = &self.table[a as usize];
            if acct.used.frames.checked_add(frames).is_none_or(|after| after > acct.limit.frames) {
                return Err(AccountError::Exceeded);
            }
        }
        // Checked above: every account of the chain has room.
        self.each_up(id, |used| used.frames += frames);
        Ok(())
    }

    /// Gives back `frames` frames: [`Accounts::uncharge`] with
    /// `Amount::new(frames, 0)`, on the one field it changes.
    pub fn uncharge_frames(&mut self, id: AccountId, frames: u64) {
        self.each_up(id, |used| used.frames = used.frames.saturating_sub(frames));
    }

    /// Changes the use of `id` and every ancestor with `f`, walking parent
    /// links (no allocation).
    fn each_up(&mut self, id: AccountId, mut f: impl FnMut(&mut Amount)) {
        let mut cur = id;
        for _ in 0..=MAX_DEPTH {
            let Some(acct) = self.table.get_mut(cur as usize).filter(|a| a.live) else { return };
            f(&mut acct.used);
            if acct.depth == 0 {
                return;
            }
            cur = acct.parent;
        }
    }

    /// Adds `amount` to `id` and every ancestor, walking parent links (no
    /// allocation); for callers that checked the room.
    fn add(&mut self, id: AccountId, amount: Amount) {
        self.each_up(id, |used| *used = used.checked_add(amount).unwrap_or(*used));
    }

    /// Moves a charge of `amount` from `from` to `to`, or changes nothing
    /// (`Exceeded` when an account of `to`'s chain that is not also above
    /// `from` lacks room; the accounts both chains share see no change).
    /// Checked as a whole first, then done.
    pub fn transfer(&mut self, from: AccountId, to: AccountId, amount: Amount) -> Result<(), AccountError> {
        for a in self.chain(to)? {
            if self.chain(from)?.any(|b| b == a) {
                continue;
            }
            let acct = &self.table[a as usize];
            let after = acct.used.checked_add(amount).ok_or(AccountError::Exceeded)?;
            if !after.fits(acct.limit) {
                return Err(AccountError::Exceeded);
            }
        }
        self.uncharge(from, amount);
        self.add(to, amount);
        Ok(())
    }

    /// Gives back `amount` charged to `id` (and its ancestors). Never fails;
    /// counts never go below zero.
    pub fn uncharge(&mut self, id: AccountId, amount: Amount) {
        self.each_up(id, |used| *used = used.saturating_sub(amount));
    }

    /// An environment is now charged directly to `id` (keeps it alive).
    pub fn attach(&mut self, id: AccountId) -> Result<(), AccountError> {
        let acct = self.table.get_mut(id as usize).filter(|a| a.live).ok_or(AccountError::NoAccount)?;
        acct.refs = acct.refs.saturating_add(1);
        Ok(())
    }

    /// An environment charged to `id` is gone (its charges already given
    /// back). An account nothing refers to any more is freed, and so in
    /// turn are ancestors left without references (never the root).
    pub fn detach(&mut self, id: AccountId) {
        let mut cur = id;
        for _ in 0..=MAX_DEPTH {
            let free_head = self.free;
            let Some(acct) = self.table.get_mut(cur as usize).filter(|a| a.live) else { return };
            acct.refs = acct.refs.saturating_sub(1);
            if acct.refs > 0 || acct.depth == 0 {
                return;
            }
            let parent = acct.parent;
            acct.live = false;
            acct.next_free = free_head;
            self.free = Some(cur);
            cur = parent;
        }
    }

    /// Moves an environment whose charges (`usage`) are in `from` into a
    /// new sub-account of `from` limited to `limit`: its charges now also
    /// count against the new account (they already counted against `from`
    /// and its ancestors, so nothing changes there). The new account is
    /// returned; the environment no longer refers to `from` directly, the
    /// new account does instead.
    ///
    /// Refused (nothing changed) when `from` is unknown, the new account
    /// would be deeper than [`MAX_DEPTH`], or `usage` already exceeds
    /// `limit`.
    pub fn split(&mut self, from: AccountId, limit: Amount, usage: Amount) -> Result<AccountId, AccountError> {
        let parent = *self.get(from)?;
        if parent.depth >= MAX_DEPTH {
            return Err(AccountError::TooDeep);
        }
        if !usage.fits(limit) {
            return Err(AccountError::Exceeded);
        }
        let row =
            Account { parent: from, depth: parent.depth + 1, limit, used: usage, refs: 1, live: true, next_free: None };
        let id = match self.free {
            Some(id) => {
                let slot = &mut self.table[id as usize];
                self.free = slot.next_free;
                *slot = row;
                id
            }
            None => {
                let id = AccountId::try_from(self.table.len()).map_err(|_| AccountError::NoRoom)?;
                self.table.try_reserve(1).map_err(|_| AccountError::NoRoom)?;
                self.table.push(row);
                id
            }
        };
        // `from` loses the environment and gains the child: refs unchanged.
        Ok(id)
    }

    /// True if `inner` is `outer` or nested (at any depth) inside it.
    pub fn within(&self, inner: AccountId, outer: AccountId) -> bool {
        self.chain(inner).is_ok_and(|mut c| c.any(|a| a == outer))
    }

    /// Usage, limits and place of account `id`.
    pub fn info(&self, id: AccountId) -> Option<Info> {
        let a = self.get(id).ok()?;
        Some(Info { used: a.used, limit: a.limit, depth: a.depth, parent: a.parent })
    }

    /// The tightest room left for `id`: the least headroom up its chain.
    pub fn room(&self, id: AccountId) -> Option<Amount> {
        let mut room = Amount::UNLIMITED;
        for a in self.chain(id).ok()? {
            let acct = &self.table[a as usize];
            let left = acct.limit.saturating_sub(acct.used);
            room = room.min(left);
        }
        Some(room)
    }

    /// Live accounts, the root included.
    pub fn live(&self) -> usize {
        self.table.iter().filter(|a| a.live).count()
    }
}

#[cfg(test)]
mod tests;
