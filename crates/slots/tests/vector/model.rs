//! Random operations against a plain model of the vector.

use crate::env;
use oxok_abi::env_id::EnvId;
use oxok_slots::{Placement, SlotError, SlotVector, TimeSlot};

const N: usize = 12;

struct Model {
    owner: [Option<EnvId>; N],
    generation: [u32; N],
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn distance(a: usize, b: usize) -> usize {
    let d = a.abs_diff(b);
    d.min(N - d)
}

impl Model {
    fn alloc(&mut self, env: EnvId, p: Placement) -> Result<TimeSlot, SlotError> {
        let free: Vec<usize> = (0..N).filter(|&i| self.owner[i].is_none()).collect();
        let i = match p {
            Placement::At(TimeSlot(i)) | Placement::Near(TimeSlot(i)) if i >= N => return Err(SlotError::OutOfRange),
            Placement::At(TimeSlot(i)) if self.owner[i].is_some() => return Err(SlotError::Taken),
            Placement::At(TimeSlot(i)) => i,
            _ if free.is_empty() => return Err(SlotError::Full),
            Placement::Any => free[0],
            Placement::Near(TimeSlot(i)) => *free.iter().min_by_key(|&&f| (f + N - i) % N).unwrap(),
            Placement::Spread => {
                let own: Vec<usize> = (0..N).filter(|&i| self.owner[i] == Some(env)).collect();
                let score = |f: usize| own.iter().map(|&o| distance(f, o)).min().unwrap_or(0);
                let best = free.iter().map(|&f| score(f)).max().unwrap();
                *free.iter().find(|&&f| score(f) == best).unwrap()
            }
        };
        self.owner[i] = Some(env);
        self.generation[i] = self.generation[i].wrapping_add(1);
        Ok(TimeSlot(i))
    }
}

#[test]
fn matches_model() {
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut v = SlotVector::<N>::new();
    let mut m = Model { owner: [None; N], generation: [0; N] };
    let envs = [env(0x400), env(0x800), env(0xc00)];
    // The rows a publisher last copied, and the change count it saw then.
    let mut published = (v.owner_changes(), m.owner, m.generation);
    for _ in 0..50_000 {
        let r = xorshift(&mut seed);
        let env = envs[(r >> 8) as usize % envs.len()];
        let i = match (r >> 16) % 5 {
            0 => (r >> 24) as usize,
            _ => (r >> 24) as usize % (N + 2),
        };
        match r % 6 {
            0 | 1 => {
                let p = match (r >> 4) % 4 {
                    0 => Placement::Any,
                    1 => Placement::At(TimeSlot(i)),
                    2 => Placement::Near(TimeSlot(i)),
                    _ => Placement::Spread,
                };
                assert_eq!(v.alloc(env, p), m.alloc(env, p), "alloc {env} {p:?}");
            }
            2 => {
                let want = match m.owner.get(i) {
                    None => Err(SlotError::OutOfRange),
                    Some(o) if *o == Some(env) => {
                        m.owner[i] = None;
                        m.generation[i] = m.generation[i].wrapping_add(1);
                        Ok(())
                    }
                    Some(_) => Err(SlotError::NotOwner),
                };
                assert_eq!(v.free(TimeSlot(i), env), want);
            }
            3 => {
                let to = envs[(r >> 40) as usize % envs.len()];
                let want = match m.owner.get(i) {
                    None => Err(SlotError::OutOfRange),
                    Some(o) if *o != Some(env) => Err(SlotError::NotOwner),
                    Some(_) => {
                        m.owner[i] = Some(to);
                        m.generation[i] = m.generation[i].wrapping_add(1);
                        Ok(())
                    }
                };
                assert_eq!(v.give(TimeSlot(i), env, to), want);
            }
            4 if r % 97 == 4 => {
                let want = (0..N).filter(|&j| m.owner[j] == Some(env)).count();
                for j in 0..N {
                    if m.owner[j] == Some(env) {
                        m.owner[j] = None;
                        m.generation[j] = m.generation[j].wrapping_add(1);
                    }
                }
                assert_eq!(v.release_all(env), want);
            }
            _ => {}
        }
        for j in 0..N {
            assert_eq!(v.owner(TimeSlot(j)), m.owner[j]);
            assert_eq!(v.generation(TimeSlot(j)), Some(m.generation[j]));
        }
        assert_eq!(v.free_count(), m.owner.iter().filter(|o| o.is_none()).count());
        // An unchanged count means no owner or generation differs from
        // what was published (the kernel then rewrites one row, not all).
        if v.owner_changes() == published.0 {
            assert_eq!((published.1, published.2), (m.owner, m.generation));
        }
        if r.is_multiple_of(3) {
            published = (v.owner_changes(), m.owner, m.generation);
        }
    }
}
