//! A miniature kernel driven by a hostile environment with random register
//! values. The victim never grants anything; the attacker must never pass a
//! guard on any of the victim's frames or on the victim itself.

mod common;
use common::Rng;
#[allow(unused_imports)]
use common::RngExt as _;
use oxok_cap::{Cap, CapError, CapList, Kind, Name, Rights, check_slot, derive_into, grant, revoke_matching};

const SLOTS: usize = 64;
const FRAMES: u64 = 8;
const VICTIM: usize = 0;
const ATTACKER: usize = 1;
const RW: Rights = Rights::READ.union(Rights::WRITE);

struct Frame {
    generation: u64,
    owner: Option<usize>,
}

struct Kernel {
    frames: Vec<Frame>,
    lists: [CapList<SLOTS>; 2],
    /// Whether freeing a frame also revokes capabilities on it; with this
    /// off, the generation alone must keep stale capabilities useless.
    revoke_on_free: bool,
}

impl Kernel {
    fn new(revoke_on_free: bool) -> Kernel {
        let mut k = Kernel {
            frames: (0..FRAMES).map(|_| Frame { generation: 0, owner: None }).collect(),
            lists: [CapList::new(), CapList::new()],
            revoke_on_free,
        };
        for env in [VICTIM, ATTACKER] {
            // Each environment holds a capability on itself.
            let me = Cap::new(Name::env(env as u64, 0), Rights::ALL);
            k.lists[env].insert(me).unwrap();
        }
        k
    }

    fn frame_name(&self, f: u64) -> Option<Name> {
        let frame = self.frames.get(usize::try_from(f).ok()?)?;
        Some(Name::frame(f, frame.generation))
    }

    /// Allocates frame `f` to `env`, minting a capability on it.
    fn alloc(&mut self, env: usize, f: u64) -> Result<usize, CapError> {
        let name = self.frame_name(f).ok_or(CapError::WrongName)?;
        let frame = &mut self.frames[f as usize];
        if frame.owner.is_some() {
            return Err(CapError::Denied);
        }
        let slot = self.lists[env].insert(Cap::new(name, Rights::ALL))?;
        frame.owner = Some(env);
        Ok(slot)
    }

    /// Frees frame `f`, with the capability in `slot` needing WRITE.
    fn free(&mut self, env: usize, slot: u64, f: u64) -> Result<(), CapError> {
        let name = self.frame_name(f).ok_or(CapError::WrongName)?;
        check_slot(&self.lists[env], slot, &name, Rights::WRITE)?;
        let frame = &mut self.frames[f as usize];
        frame.owner = None;
        frame.generation += 1;
        if self.revoke_on_free {
            for list in &mut self.lists {
                revoke_matching(list, &name);
            }
        }
        Ok(())
    }

    /// "Maps" frame `f` with `need`, presenting `slot`.
    fn map(&self, env: usize, slot: u64, f: u64, need: Rights) -> Result<(), CapError> {
        let name = self.frame_name(f).ok_or(CapError::WrongName)?;
        check_slot(&self.lists[env], slot, &name, need).map(|_| ())
    }

    /// Reads or writes environment `target`'s state.
    fn env_state(&self, env: usize, slot: u64, target: u64, need: Rights) -> Result<(), CapError> {
        check_slot(&self.lists[env], slot, &Name::env(target, 0), need).map(|_| ())
    }
}

fn victim_frames(k: &Kernel) -> Vec<u64> {
    (0..FRAMES).filter(|&f| k.frames[f as usize].owner == Some(VICTIM)).collect()
}

fn run(seed: u64, revoke_on_free: bool) {
    let mut rng = Rng::new(seed);
    let mut k = Kernel::new(revoke_on_free);
    for step in 0..20_000 {
        // The victim allocates and frees now and then (with its own caps).
        if rng.chance(8) {
            let f = rng.below(FRAMES);
            if k.frames[f as usize].owner == Some(VICTIM) {
                let name = k.frame_name(f).unwrap();
                let slot = k.lists[VICTIM].find_dominating(&name, Rights::WRITE).unwrap();
                k.free(VICTIM, slot as u64, f).unwrap();
            } else {
                let _ = k.alloc(VICTIM, f);
            }
        }
        // The attacker does anything with any register values.
        let slot = if rng.chance(3) { rng.hostile() } else { rng.below(SLOTS as u64) };
        let f = if rng.chance(4) { rng.hostile() } else { rng.below(FRAMES) };
        let rights = Rights::from_bits((rng.next() & 7) as u8).unwrap();
        let attacker_list = &mut k.lists[ATTACKER];
        match rng.below(7) {
            0 => {
                let _ = k.alloc(ATTACKER, f);
            }
            1 => {
                let victim_owned = k.frames.get(f as usize).is_some_and(|fr| fr.owner == Some(VICTIM));
                let r = k.free(ATTACKER, slot, f);
                assert!(!(victim_owned && r.is_ok()), "step {step}: freed victim frame {f}");
            }
            2 => {
                let len = rng.below(10) as usize;
                let suffix: Vec<u64> = (0..len).map(|_| rng.hostile()).collect();
                let _ = derive_into(attacker_list, slot, &suffix, rights);
            }
            3 => {
                let _ = attacker_list.remove(slot);
            }
            4 => {
                // Grant to itself (through a copy, as the kernel would have
                // two distinct lists) and to the victim: both harmless.
                let copy = attacker_list.clone();
                let _ = grant(&copy, slot, attacker_list, rights);
            }
            5 => {
                let (v, a) = k.lists.split_at_mut(1);
                let _ = grant(&a[0], slot, &mut v[0], rights);
            }
            _ => {
                // Overwrite a slot with a copy of one of its own caps.
                if let Ok(c) = attacker_list.get(rng.below(SLOTS as u64)).copied() {
                    let _ = attacker_list.insert_at(slot, c);
                }
            }
        }
        // Invariants: the attacker can touch no victim frame and not the
        // victim, whatever slot it presents.
        for vf in victim_frames(&k) {
            for s in 0..SLOTS as u64 {
                assert!(
                    k.map(ATTACKER, s, vf, Rights::NONE).is_err(),
                    "step {step}: attacker slot {s} covers victim frame {vf}"
                );
            }
        }
        for s in 0..SLOTS as u64 {
            assert!(k.env_state(ATTACKER, s, VICTIM as u64, Rights::NONE).is_err());
        }
        // No attacker capability covers anything of the victim's or the
        // frame kind as a whole.
        for (_, cap) in k.lists[ATTACKER].iter() {
            assert!(!cap.name.is_prefix_of(&Name::kind_root(Kind::Frame)));
            assert!(!cap.name.is_prefix_of(&Name::env(VICTIM as u64, 0)));
        }
        // The victim still works with its own capabilities.
        for vf in victim_frames(&k) {
            let name = k.frame_name(vf).unwrap();
            let s = k.lists[VICTIM].find_dominating(&name, RW).unwrap();
            assert_eq!(k.map(VICTIM, s as u64, vf, RW), Ok(()));
        }
    }
}

#[test]
fn attacker_with_revocation_on_free() {
    for seed in 1..=4 {
        run(seed, true);
    }
}

#[test]
fn attacker_without_revocation_generation_protects() {
    for seed in 5..=8 {
        run(seed, false);
    }
}

#[test]
fn stale_capability_after_reallocation() {
    let mut k = Kernel::new(false);
    let slot = k.alloc(ATTACKER, 3).unwrap() as u64;
    assert_eq!(k.map(ATTACKER, slot, 3, RW), Ok(()));
    k.free(ATTACKER, slot, 3).unwrap();
    k.alloc(VICTIM, 3).unwrap();
    // The attacker still holds its old capability, but its generation is
    // stale.
    assert!(k.lists[ATTACKER].get(slot).is_ok());
    assert_eq!(k.map(ATTACKER, slot, 3, Rights::READ), Err(CapError::WrongName));
    assert_eq!(k.free(ATTACKER, slot, 3), Err(CapError::WrongName));
}
