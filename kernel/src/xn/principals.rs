//! The caller's credentials for XN: the principals its capabilities cover.

use oxok_abi::CAP_SLOTS;
use oxok_cap::{CapList, Kind, Name};

/// The principals one capability list acts as: every principal if some
/// capability covers `/8` (a capability on `/8`, or on `/`), else the `p`
/// of each capability on exactly `/8/p` (a name below a principal,
/// `/8/p/…`, covers none). Rights do not matter, the name does. The list
/// is asked when XN asks ([`oxok_xn::Creds::holds`]), one pass over its
/// capabilities: nothing changes it during an XN call, and a call that
/// asks nothing (most ask once or twice) costs nothing.
#[derive(Clone, Copy)]
pub struct Principals<'a> {
    caps: &'a CapList<CAP_SLOTS>,
}

impl<'a> Principals<'a> {
    /// The principals `caps` covers.
    pub fn of(caps: &'a CapList<CAP_SLOTS>) -> Principals<'a> {
        Principals { caps }
    }
}

impl oxok_xn::Creds for Principals<'_> {
    fn holds(&self, principal: u64) -> bool {
        let every = Name::kind_root(Kind::Principal);
        self.caps.iter().any(|(_, cap)| cap.name.is_prefix_of(&every) || cap.name.as_principal() == Some(principal))
    }
}
