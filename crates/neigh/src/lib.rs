//! The machine's neighbour table: ARP's answers shared between the
//! network stacks of many programs.
//!
//! Packets are demultiplexed by filters that may not overlap, so exactly
//! one program receives the machine's ARP traffic. Every other stack would
//! send requests whose replies it never sees. ExOS's answer, and Oxok's:
//! one program (`arpd`) owns the ARP filter, answers requests for the
//! machine's address, learns every sender it hears, and keeps what it
//! learned in one page ([`table`]) that it grants read-only to each stack
//! that asks. A stack sends its own requests (its transmit template allows
//! them) and reads the answers from the page; [`arp`] builds the reply a
//! stack hands its own ARP code, so smoltcp needs no change.
//!
//! The page is the writer's claim, not a fact: a reader checks the magic,
//! bounds the count, retries a torn read and takes no multicast or zero
//! address.
#![no_std]

pub mod arp;
pub mod table;

/// An IPv4 address.
pub type Ip = [u8; 4];
/// An Ethernet address.
pub type Mac = [u8; 6];
