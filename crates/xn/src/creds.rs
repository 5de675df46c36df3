//! Credentials: which principals the caller acts as.

/// The principals a caller acts as, asked one at a time: XN's `acl`
/// functions name principals (`u64` ids; [`ANYONE`](oxok_abi::xn::ANYONE)
/// matches every caller without asking), and an operation is allowed when
/// a grant names one the caller [`holds`](Creds::holds).
///
/// The kernel implements it over the caller's capability list (a
/// capability covering `/8/p` is acting as `p`, one on `/8` as every
/// principal, so the set need not be finite); a plain list of ids
/// (`[u64]`, `[u64; N]`) is one too, for the host's tools and tests.
pub trait Creds {
    /// Whether the caller acts as principal `principal`.
    fn holds(&self, principal: u64) -> bool;
}

impl Creds for [u64] {
    fn holds(&self, principal: u64) -> bool {
        self.contains(&principal)
    }
}

impl<const N: usize> Creds for [u64; N] {
    fn holds(&self, principal: u64) -> bool {
        self.as_slice().holds(principal)
    }
}
