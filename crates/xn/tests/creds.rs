//! Credentials as a trait: a caller acting as every principal (the
//! kernel's `/8` capability) passes every `acl`; one acting as another
//! principal is refused, and the refusal changes nothing.

use oxok_abi::xn::{DATA, rights};
use oxok_xn::{Creds, Extent, Refusal};

mod common;
use common::*;

/// Acts as every principal, as a holder of `/8` does.
struct All;

impl Creds for All {
    fn holds(&self, _: u64) -> bool {
        true
    }
}

/// Acts as exactly one principal.
struct One(u64);

impl Creds for One {
    fn holds(&self, p: u64) -> bool {
        p == self.0
    }
}

#[test]
fn every_principal_passes_and_another_is_denied() {
    let (mut xn, mut mem, _) = toy(64);
    let new = with_entry(cached(&xn, &mem, 1), 0, 10, 1, DATA, 1);
    let before = (xn.blocks().collect::<Vec<_>>(), xn.free_map().words().to_vec());
    assert_eq!(xn.allocate(&mut mem, &One(OWNER + 1), 1, &new, Extent::new(10, 1, DATA)), Err(Refusal::Denied(1)));
    assert_eq!(xn.bind(&mem, &One(OWNER + 1), 1, rights::READ), Err(Refusal::Denied(1)));
    assert_eq!((xn.blocks().collect::<Vec<_>>(), xn.free_map().words().to_vec()), before);
    xn.allocate(&mut mem, &All, 1, &new, Extent::new(10, 1, DATA)).unwrap();
    assert!(xn.bind(&mem, &All, 1, rights::READ).is_ok());
    // The owner itself, by trait or by a plain list of ids.
    assert!(xn.bind(&mem, &One(OWNER), 1, rights::READ).is_ok());
    assert!(xn.bind(&mem, [OWNER].as_slice(), 1, rights::READ).is_ok());
    assert_eq!(xn.bind(&mem, &[OWNER + 1, OWNER + 2], 1, rights::READ), Err(Refusal::Denied(1)));
}
