//! The Internet checksum (RFC 1071) in pieces, from `oxok-inetsum`: a
//! file's segments are summed once, when the file enters the cache, and
//! each packet's checksum finished at send time from the header's sum and
//! the stored one.

pub use oxok_inetsum::{add, finish, fold, pseudo, shift_odd};
