//! Principals in the XN attack programs: which principal a victim and an
//! attacker act as, and the attacks on principal capabilities themselves
//! (minting one without the authority to).

use crate::Checks;
use alloc::vec::Vec;
use oxok_libos::abi::xn::ANYONE;
use oxok_libos::abi::{CAP_NAME_DEPTH, CAP_SLOTS, Error, cap_kind, rights};
use oxok_libos::{principal, sys};

/// The principal the victim file systems of the XN scenarios belong to (a
/// boot program holds `/8`, every principal, and picks this one).
pub const VICTIM: u64 = 2;

/// The principal an attacker is given when its parent can give one: its
/// own, neither [`VICTIM`] nor the disk file server's.
pub const ATTACKER: u64 = 3;

/// The principal this program's own file systems belong to: the one it
/// was given, else [`ANYONE`] (a program given none can change only what
/// is anyone's).
pub fn own() -> u64 {
    principal::mine().unwrap_or(ANYONE)
}

/// Whether this program holds `/8` (every principal) with grant: a boot
/// program does, a program started by another does not.
pub fn holds_all() -> bool {
    principal::mint(ATTACKER, rights::READ).is_ok_and(|s| sys::cap_drop(s).is_ok())
}

/// Tries to mint principals without the authority to, and returns the
/// slots of the capabilities it made on the way (kept while the caller
/// attacks the victim's blocks, which they must not help with; drop them
/// with [`drop_all`]). Every attempt is refused, or makes a capability
/// that is no principal.
pub fn forge(c: &mut Checks, victim: u64) -> Vec<u64> {
    let mut made = Vec::new();
    // Its own environment (`/2/id/gen`, every right) and console
    // (`/7/0`) narrowed by 8 and by the victim's number: names below
    // their own kinds, never `/8/…`.
    let console = (0..CAP_SLOTS as u64).find(|&s| sys::cap_info(s).is_ok_and(|[k, _, _]| k == cap_kind::CONSOLE));
    for (from, what) in [(Some(0), "environment"), (console, "console")] {
        let Some(from) = from else { continue };
        for component in [cap_kind::PRINCIPAL, victim] {
            match sys::cap_narrow(from, component, rights::READ | rights::WRITE | rights::GRANT) {
                Ok([s]) => {
                    made.push(s);
                    let kind = sys::cap_info(s).map(|[k, _, _]| k);
                    c.check(kind.is_ok_and(|k| k != cap_kind::PRINCIPAL), what);
                }
                // A copy without grant may not be narrowed at all.
                Err(e) => c.expect(e, Error::Denied, what),
            }
        }
    }
    // Without grant: a read-only copy of its own environment capability,
    // and its own principal (given without grant) if it has one.
    if let Ok([ro]) = sys::cap_derive(0, rights::READ) {
        made.push(ro);
        c.expect(sys::cap_narrow(ro, victim, rights::READ).map(|_| ()), Err(Error::Denied), "narrowing without grant");
    }
    let mine =
        (0..CAP_SLOTS as u64).find(|&s| sys::cap_info(s).is_ok_and(|[k, n, _]| k == cap_kind::PRINCIPAL && n != 0));
    if let Some(p) = mine {
        c.expect(
            sys::cap_narrow(p, victim, rights::READ).map(|_| ()),
            Err(Error::Denied),
            "narrowing its principal (no grant) refused",
        );
        c.expect(
            sys::cap_grant(p, 0, rights::READ).map(|_| ()),
            Err(Error::Denied),
            "passing its principal on refused",
        );
    }
    // The depth limit: its environment capability (3 components)
    // narrowed until the name is full, then once more.
    let mut at = 0;
    let mut depth = 3;
    while depth < CAP_NAME_DEPTH {
        match sys::cap_narrow(at, 8, rights::READ | rights::GRANT) {
            Ok([s]) => {
                made.push(s);
                at = s;
                depth += 1;
            }
            Err(e) => {
                c.check(false, alloc::format!("narrowing to depth {}: {e}", depth + 1).as_str());
                break;
            }
        }
    }
    c.expect(sys::cap_narrow(at, 8, rights::READ).map(|_| ()), Err(Error::Invalid), "narrowing past the depth limit");
    // Principal 0 is anyone's: nobody mints it, and without `/8` nobody
    // mints any.
    c.expect(principal::mint(ANYONE, rights::READ), Err(Error::Invalid), "minting principal 0 refused");
    c.check(principal::mine() != Some(victim), "the victim's principal is not held");
    made
}

/// Drops the capabilities [`forge`] made.
pub fn drop_all(slots: &[u64]) {
    for &s in slots {
        let _ = sys::cap_drop(s);
    }
}
