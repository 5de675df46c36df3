use super::*;

fn one_env(frames: u64) -> Amount {
    Amount::new(frames, 1)
}

/// Root with `n` environments charged, the last one split into a
/// sub-account with `limit`.
fn limited(limit: Amount) -> (Accounts, AccountId) {
    let mut a = Accounts::new(Amount::UNLIMITED);
    a.charge(ROOT, one_env(3)).unwrap();
    a.attach(ROOT).unwrap();
    let sub = a.split(ROOT, limit, one_env(3)).unwrap();
    (a, sub)
}

#[test]
fn charges_count_up_the_chain() {
    let (mut a, sub) = limited(Amount::new(10, 4));
    a.charge(sub, Amount::new(5, 1)).unwrap();
    assert_eq!(a.info(sub).unwrap().used, Amount::new(8, 2));
    assert_eq!(a.info(ROOT).unwrap().used, Amount::new(8, 2));
    a.uncharge(sub, Amount::new(5, 1));
    assert_eq!(a.info(sub).unwrap().used, Amount::new(3, 1));
    assert_eq!(a.info(ROOT).unwrap().used, Amount::new(3, 1));
}

#[test]
fn a_charge_over_any_limit_changes_nothing() {
    let (mut a, sub) = limited(Amount::new(10, 2));
    assert_eq!(a.charge(sub, Amount::new(8, 0)), Err(AccountError::Exceeded));
    assert_eq!(a.charge(sub, Amount::new(0, 2)), Err(AccountError::Exceeded));
    assert_eq!(a.info(sub).unwrap().used, Amount::new(3, 1));
    assert_eq!(a.info(ROOT).unwrap().used, Amount::new(3, 1));
    a.charge(sub, Amount::new(7, 1)).unwrap();
    assert_eq!(a.room(sub), Some(Amount::new(0, 0)));
}

#[test]
fn a_sub_account_with_bigger_limits_is_still_bounded_by_its_parent() {
    let (mut a, sub) = limited(Amount::new(10, 3));
    // The limited environment gives itself (or a child) huge limits.
    let bigger = a.split(sub, Amount::UNLIMITED, one_env(3)).unwrap();
    assert!(a.within(bigger, sub) && a.within(bigger, ROOT) && !a.within(sub, bigger));
    assert_eq!(a.charge(bigger, Amount::new(8, 0)), Err(AccountError::Exceeded));
    a.charge(bigger, Amount::new(7, 2)).unwrap();
    assert_eq!(a.charge(bigger, Amount::new(0, 1)), Err(AccountError::Exceeded));
    assert_eq!(a.info(sub).unwrap().used, Amount::new(10, 3));
    assert_eq!(a.room(bigger), Some(Amount::new(0, 0)));
}

#[test]
fn a_root_limit_binds_everything() {
    let mut a = Accounts::new(Amount::new(5, 5));
    a.charge(ROOT, Amount::new(5, 1)).unwrap();
    assert_eq!(a.charge(ROOT, Amount::new(1, 0)), Err(AccountError::Exceeded));
    a.attach(ROOT).unwrap();
    let sub = a.split(ROOT, Amount::UNLIMITED, Amount::new(5, 1)).unwrap();
    assert_eq!(a.charge(sub, Amount::new(1, 0)), Err(AccountError::Exceeded));
}

#[test]
fn usage_above_the_new_limit_is_refused() {
    let mut a = Accounts::new(Amount::UNLIMITED);
    a.charge(ROOT, one_env(3)).unwrap();
    assert_eq!(a.split(ROOT, Amount::new(2, 5), one_env(3)), Err(AccountError::Exceeded));
    assert_eq!(a.split(ROOT, Amount::new(5, 0), one_env(3)), Err(AccountError::Exceeded));
    assert_eq!(a.live(), 1);
}

#[test]
fn nesting_is_bounded() {
    let mut a = Accounts::new(Amount::UNLIMITED);
    a.charge(ROOT, one_env(1)).unwrap();
    a.attach(ROOT).unwrap();
    let mut cur = ROOT;
    for depth in 1..=MAX_DEPTH {
        cur = a.split(cur, Amount::new(100, 100), one_env(1)).unwrap();
        assert_eq!(a.info(cur).unwrap().depth, depth);
    }
    assert_eq!(a.split(cur, Amount::new(100, 100), one_env(1)), Err(AccountError::TooDeep));
    // Every level counts the one environment.
    let mut id = cur;
    loop {
        let info = a.info(id).unwrap();
        assert_eq!(info.used, one_env(1));
        if info.depth == 0 {
            break;
        }
        id = info.parent;
    }
}

#[test]
fn accounts_are_freed_with_their_last_environment_and_rows_reused() {
    let mut a = Accounts::new(Amount::UNLIMITED);
    // Env e1 in root, moved into s1, then into s2 (inside s1).
    a.charge(ROOT, one_env(2)).unwrap();
    a.attach(ROOT).unwrap();
    let s1 = a.split(ROOT, Amount::new(50, 5), one_env(2)).unwrap();
    let s2 = a.split(s1, Amount::new(40, 4), one_env(2)).unwrap();
    // e2, its child, charged to s2.
    a.charge(s2, one_env(4)).unwrap();
    a.attach(s2).unwrap();
    assert_eq!(a.live(), 3);
    // e1 dies.
    a.uncharge(s2, one_env(2));
    a.detach(s2);
    assert_eq!(a.live(), 3, "e2 still keeps s2 and s1 alive");
    assert_eq!(a.info(s1).unwrap().used, one_env(4));
    // e2 dies: s2 and s1 go, root stays.
    a.uncharge(s2, one_env(4));
    a.detach(s2);
    assert_eq!(a.live(), 1);
    assert_eq!(a.info(s2), None);
    assert_eq!(a.info(s1), None);
    assert_eq!(a.info(ROOT).unwrap().used, Amount::default());
    assert_eq!(a.charge(s2, one_env(1)), Err(AccountError::NoAccount));
    // Rows are reused; the table does not grow.
    a.charge(ROOT, one_env(1)).unwrap();
    a.attach(ROOT).unwrap();
    let again = a.split(ROOT, Amount::new(9, 9), one_env(1)).unwrap();
    assert!(again == s1 || again == s2);
    assert_eq!(a.table.len(), 3);
}

#[test]
fn bad_ids_are_harmless() {
    let mut a = Accounts::new(Amount::UNLIMITED);
    for id in [1, 7, u32::MAX] {
        assert_eq!(a.charge(id, one_env(1)), Err(AccountError::NoAccount));
        a.uncharge(id, one_env(1));
        a.detach(id);
        assert_eq!(a.attach(id), Err(AccountError::NoAccount));
        assert_eq!(a.split(id, Amount::UNLIMITED, one_env(0)), Err(AccountError::NoAccount));
        assert!(!a.within(id, ROOT));
        assert_eq!(a.info(id), None);
    }
    // The root is never freed.
    a.detach(ROOT);
    a.detach(ROOT);
    assert!(a.info(ROOT).is_some());
    assert_eq!(a.charge(ROOT, Amount::new(u64::MAX, 0)), Ok(()));
    assert_eq!(a.charge(ROOT, Amount::new(1, 0)), Err(AccountError::Exceeded), "overflow is refused");
}

/// Random operations on a population of environments: the chain sums stay
/// exact and every limit holds after every step.
#[test]
fn random_population_keeps_every_limit() {
    let mut rng = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut a = Accounts::new(Amount::new(500, 60));
    // (account, frames charged) per live environment.
    let mut envs: Vec<(AccountId, u64)> = Vec::new();
    for _ in 0..20_000 {
        let r = next();
        match r % 5 {
            0 => {
                // create, charged to a random environment's account (or root)
                let acct = if envs.is_empty() { ROOT } else { envs[(r >> 8) as usize % envs.len()].0 };
                if a.charge(acct, one_env(1)).is_ok() {
                    a.attach(acct).unwrap();
                    envs.push((acct, 1));
                }
            }
            1 if !envs.is_empty() => {
                let i = (r >> 8) as usize % envs.len();
                let (acct, f) = envs.swap_remove(i);
                a.uncharge(acct, one_env(f));
                a.detach(acct);
            }
            2 if !envs.is_empty() => {
                let i = (r >> 8) as usize % envs.len();
                let n = (r >> 20) % 8;
                // The frames-only short path must act as the general one.
                let ok = if r & (1 << 40) != 0 {
                    a.charge_frames(envs[i].0, n).is_ok()
                } else {
                    a.charge(envs[i].0, Amount::new(n, 0)).is_ok()
                };
                if ok {
                    envs[i].1 += n;
                }
            }
            3 if !envs.is_empty() => {
                let i = (r >> 8) as usize % envs.len();
                let limit = Amount::new((r >> 20) % 120, (r >> 30) % 12);
                if let Ok(sub) = a.split(envs[i].0, limit, one_env(envs[i].1)) {
                    envs[i].0 = sub;
                }
            }
            _ if !envs.is_empty() => {
                let i = (r >> 8) as usize % envs.len();
                let n = ((r >> 20) % 4).min(envs[i].1 - 1);
                if r & (1 << 40) != 0 {
                    a.uncharge_frames(envs[i].0, n);
                } else {
                    a.uncharge(envs[i].0, Amount::new(n, 0));
                }
                envs[i].1 -= n;
            }
            _ => {}
        }
        // Every live account's use equals the sum over environments nested
        // in it, and fits its limit.
        for (id, row) in a.table.iter().enumerate() {
            if !row.live {
                continue;
            }
            let mut sum = Amount::default();
            for &(acct, f) in &envs {
                if a.within(acct, id as AccountId) {
                    sum = sum.checked_add(one_env(f)).unwrap();
                }
            }
            assert_eq!(row.used, sum, "account {id}");
            assert!(row.used.fits(row.limit), "account {id} over its limit");
        }
    }
    for (acct, f) in envs.drain(..) {
        a.uncharge(acct, one_env(f));
        a.detach(acct);
    }
    assert_eq!(a.live(), 1);
    assert_eq!(a.info(ROOT).unwrap().used, Amount::default());
}

#[test]
fn slots_nest_like_frames() {
    // A sub-account limited to 3 slots (frames and environments unlimited
    // at its level), and one below it that asks for 10.
    let (mut a, sub) = limited(Amount::UNLIMITED.with_slots(3));
    let below = a.split(sub, Amount::UNLIMITED.with_slots(10), one_env(3)).unwrap();
    a.charge(below, Amount::slots(2)).unwrap();
    a.charge(sub, Amount::slots(1)).unwrap();
    // The parent's limit binds the child whatever the child was given.
    assert_eq!(a.charge(below, Amount::slots(1)), Err(AccountError::Exceeded));
    assert_eq!(a.charge(sub, Amount::slots(1)), Err(AccountError::Exceeded));
    assert_eq!(a.info(sub).unwrap().used.slots, 3);
    assert_eq!(a.info(below).unwrap().used.slots, 2);
    assert_eq!(a.info(ROOT).unwrap().used.slots, 3);
    // Frames still charge freely (no frame limit up the chain).
    a.charge(below, Amount::new(100, 0)).unwrap();
    a.uncharge(below, Amount::slots(2));
    a.charge(below, Amount::slots(2)).unwrap();
    assert_eq!(a.info(ROOT).unwrap().used.slots, 3);
    // A split whose current slots exceed the new limit is refused.
    assert_eq!(a.split(below, Amount::UNLIMITED.with_slots(1), one_env(3).with_slots(2)), Err(AccountError::Exceeded));
}

#[test]
fn kernel_heap_is_charged_up_the_chain_and_bounded_by_every_limit() {
    let (mut a, sub) = limited(Amount::UNLIMITED.with_heap(10_000));
    let inner = a.split(sub, Amount::UNLIMITED.with_heap(50_000), Amount::default()).unwrap();
    a.charge(inner, Amount::heap(6_000)).unwrap();
    assert_eq!(a.info(sub).unwrap().used.heap, 6_000);
    assert_eq!(a.info(ROOT).unwrap().used.heap, 6_000);
    // The inner limit is wider, the outer one binds.
    assert_eq!(a.charge(inner, Amount::heap(4_001)), Err(AccountError::Exceeded));
    assert_eq!(a.info(inner).unwrap().used.heap, 6_000);
    a.charge(inner, Amount::heap(4_000)).unwrap();
    assert_eq!(a.room(inner).map(|r| r.heap), Some(0));
    a.uncharge(inner, Amount::heap(10_000));
    assert_eq!(a.info(ROOT).unwrap().used.heap, 0);
}

#[test]
fn a_transfer_moves_a_charge_or_changes_nothing() {
    // sub (3 slots) and its child below; a sibling `other` (1 slot).
    let (mut a, sub) = limited(Amount::UNLIMITED.with_slots(3));
    let below = a.split(sub, Amount::UNLIMITED, one_env(0)).unwrap();
    a.attach(ROOT).unwrap();
    let other = a.split(ROOT, Amount::UNLIMITED.with_slots(1), one_env(0)).unwrap();
    a.charge(below, Amount::slots(1)).unwrap();
    // Into a nested account: the shared chain (sub, root) sees no change.
    a.charge(sub, Amount::slots(2)).unwrap();
    a.transfer(sub, below, Amount::slots(1)).unwrap();
    assert_eq!(a.info(below).unwrap().used.slots, 2);
    assert_eq!(a.info(sub).unwrap().used.slots, 3, "sub is full, yet the move within it fits");
    assert_eq!(a.info(ROOT).unwrap().used.slots, 3);
    // Out of it to the sibling: fits once, then the sibling is full and
    // nothing changes.
    a.transfer(below, other, Amount::slots(1)).unwrap();
    assert_eq!(a.info(other).unwrap().used.slots, 1);
    assert_eq!(a.info(sub).unwrap().used.slots, 2);
    assert_eq!(a.transfer(below, other, Amount::slots(1)), Err(AccountError::Exceeded));
    assert_eq!(a.info(below).unwrap().used.slots, 1);
    assert_eq!(a.info(other).unwrap().used.slots, 1);
    assert_eq!(a.info(ROOT).unwrap().used.slots, 3);
    assert_eq!(a.transfer(below, 999, Amount::slots(1)), Err(AccountError::NoAccount));
    assert_eq!(a.info(below).unwrap().used.slots, 1);
}
