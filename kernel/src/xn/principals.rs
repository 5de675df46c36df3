//! The caller's credentials for XN: the principals its capabilities cover.

use oxok_abi::CAP_SLOTS;
use oxok_cap::{CapList, Kind, Name};

/// The principals one capability list acts as: every principal if some
/// capability covers `/8` (a capability on `/8`, or on `/`), else the `p`
/// of each capability on exactly `/8/p` (a name below a principal,
/// `/8/p/…`, covers none). A copy taken at the call's entry, one pass over
/// the list's fixed number of slots; rights do not matter, the name does.
pub struct Principals {
    all: bool,
    ids: [u64; CAP_SLOTS],
    len: usize,
}

impl Principals {
    /// The principals `caps` covers.
    pub fn of(caps: &CapList<CAP_SLOTS>) -> Principals {
        let every = Name::kind_root(Kind::Principal);
        let mut me = Principals { all: false, ids: [0; CAP_SLOTS], len: 0 };
        for (_, cap) in caps.iter() {
            if cap.name.is_prefix_of(&every) {
                me.all = true;
            } else if let Some(p) = cap.name.as_principal()
                && let Some(id) = me.ids.get_mut(me.len)
            {
                *id = p;
                me.len += 1;
            }
        }
        me
    }

    /// None at all (a caller that is gone).
    pub const NONE: Principals = Principals { all: false, ids: [0; CAP_SLOTS], len: 0 };
}

impl oxok_xn::Creds for Principals {
    fn holds(&self, principal: u64) -> bool {
        self.all || self.ids.get(..self.len).is_some_and(|ids| ids.contains(&principal))
    }
}
