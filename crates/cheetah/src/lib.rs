//! Cheetah's core, with no system calls in it (the program `cheetah` wires
//! it to a packet ring, checked transmit and the file server):
//!
//! * [`Server`]: a passive-open TCP for one port whose send queues name
//!   byte ranges of responses the [`Site`] keeps (the file cache), never
//!   copies; retransmission goes back to the same ranges. Each segment's
//!   checksum is finished from the header's sum and the payload sum the
//!   site stored when the file entered the cache ([`SegmentSums`]). The
//!   acknowledgment of a request rides on the response; a connection's
//!   slot, parser and queue are reused for the next connection; a full
//!   table answers 503 (then refuses with RST). HTTP is `oxok-http`'s.
//! * [`checksum`]: ones'-complement sums that combine.
//! * [`group`]: the files an HTML page references, loaded with the page.
//! * [`wire`]: Ethernet, ARP, IPv4 and TCP headers.
#![no_std]

extern crate alloc;

pub mod checksum;
pub mod group;
pub mod wire;

mod conn;
mod server;
mod sums;

pub use server::{Config, Response, Server, Site, Stats};
pub use sums::SegmentSums;

#[cfg(test)]
mod tests;
