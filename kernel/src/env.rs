//! Environments: Xok's unit of protection — an address space, a saved user
//! register state and (as later issues add them) upcall entry points, a
//! capability list and an application area.

use crate::arch::trapframe::TrapFrame;
use crate::mem::frame;
use crate::mem::paging::AddressSpace;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use oxok_abi::Error;
use oxok_abi::frames::OWNER_FIRST_ENV;
use oxok_abi::layout::pte;

/// Most environments alive at once.
pub const MAX_ENVS: usize = 1024;
const INDEX_BITS: u32 = 10;

/// An environment id: `generation << 10 | slot`. Generations start at 1, so
/// every id is ≥ `OWNER_FIRST_ENV` and an id is never reused for a new
/// environment in the same slot until the generation wraps.
pub type EnvId = u32;

/// One environment.
pub struct Env {
    /// Its id.
    pub id: EnvId,
    /// The program it was started from (for logs and tables).
    pub name: String,
    /// Its page tables.
    pub space: AddressSpace,
    /// Its user registers while it is not running.
    pub regs: TrapFrame,
}

struct Slot {
    generation: u32,
    env: Option<Box<Env>>,
}

/// All environments, by slot.
pub struct EnvTable {
    slots: Vec<Slot>,
}

const _: () = assert!(1 << INDEX_BITS >= OWNER_FIRST_ENV as usize);

impl EnvTable {
    /// An empty table.
    pub fn new() -> EnvTable {
        let mut slots = Vec::with_capacity(MAX_ENVS);
        slots.resize_with(MAX_ENVS, || Slot {
            generation: 0,
            env: None,
        });
        EnvTable { slots }
    }

    /// Creates an environment with an empty address space.
    pub fn create(&mut self, name: &str) -> Result<EnvId, Error> {
        let index = self
            .slots
            .iter()
            .position(|s| s.env.is_none())
            .ok_or(Error::NoMemory)?;
        let space = AddressSpace::new()?;
        let slot = &mut self.slots[index];
        slot.generation = match slot.generation.wrapping_add(1) & ((1 << (32 - INDEX_BITS)) - 1) {
            0 => 1,
            g => g,
        };
        let id = (slot.generation << INDEX_BITS) | index as u32;
        slot.env = Some(Box::new(Env {
            id,
            name: String::from(name),
            space,
            regs: TrapFrame::default(),
        }));
        Ok(id)
    }

    /// The environment with this id, if it is alive.
    pub fn get(&mut self, id: EnvId) -> Option<&mut Env> {
        let slot = self.slots.get_mut((id as usize) & (MAX_ENVS - 1))?;
        slot.env.as_deref_mut().filter(|e| e.id == id)
    }

    /// True if `id` names a live environment.
    pub fn alive(&self, id: EnvId) -> bool {
        self.slots
            .get((id as usize) & (MAX_ENVS - 1))
            .and_then(|s| s.env.as_ref())
            .is_some_and(|e| e.id == id)
    }

    /// Removes the environment and releases everything it owns: every page
    /// it maps (frames it owns are freed once no mapping remains) and its
    /// page tables.
    pub fn destroy(&mut self, id: EnvId) -> Result<(), Error> {
        let slot = self
            .slots
            .get_mut((id as usize) & (MAX_ENVS - 1))
            .ok_or(Error::BadEnv)?;
        if slot.env.as_ref().is_none_or(|e| e.id != id) {
            return Err(Error::BadEnv);
        }
        let Some(env) = slot.env.take() else {
            return Err(Error::BadEnv);
        };
        env.space.destroy(|_va, entry| unmap_release(id, entry));
        Ok(())
    }

    /// Number of live environments.
    pub fn count(&self) -> usize {
        self.slots.iter().filter(|s| s.env.is_some()).count()
    }
}

/// Maps frame `pa` into `env`'s space at `va` and counts the mapping.
pub fn map_frame(env: &mut Env, va: u64, pa: u64, flags: u64) -> Result<(), Error> {
    env.space.map(va, pa, flags)?;
    frame::with(|f| {
        if let Some(e) = f.entry_mut(pa / crate::mem::PAGE_SIZE) {
            e.maps = e.maps.saturating_add(1);
        }
    });
    Ok(())
}

/// Drops one mapping of the frame in `entry`; frees it if `owner` owns it
/// and nothing maps it any more.
fn unmap_release(owner: EnvId, entry: u64) {
    let pa = entry & pte::ADDRESS_MASK;
    frame::with(|f| {
        let pfn = pa / crate::mem::PAGE_SIZE;
        let free = match f.entry_mut(pfn) {
            Some(e) => {
                e.maps = e.maps.saturating_sub(1);
                e.owner == owner && e.maps == 0 && e.refs == 0
            }
            None => false,
        };
        if free {
            f.free(pa);
        }
    });
}
