//! The machine's neighbour table as a stack sees it (`oxok_neigh`): one
//! program, `arpd`, owns the ARP filter and keeps what it hears in a page;
//! every other stack maps that page read-only and reads its answers there.
//!
//! A stack finds `arpd` as it finds its file server (`fs::locate`: an
//! ancestor's, or a boot program) and asks it once, by protected control
//! transfer, for the page ([`OP_TABLE`]; `arpd` grants a read-only
//! capability with `pct_grant`). The page is mapped at [`TABLE_VA`],
//! shared across `fork` (a child reads the same table).
//!
//! [`Resolver`] sits in a stack's device: when the stack sends an ARP
//! request, the answer is taken from the table if it is there (the request
//! is not sent) or the request goes out and its address waits (a few
//! milliseconds at once, for `arpd` to hear the answer; then each time
//! the stack asks for a packet), and a known one comes back as the reply
//! the neighbour would have sent.
//! The stack's own ARP code learns from it, unchanged.

use super::{Filter, Ring, filters};
use crate::time::ticks;
use crate::{exposed, pct, sys};
use oxok_abi::Error;
use oxok_abi::layout::pte;
use oxok_neigh::table::{self, Answer};
use oxok_neigh::{Ip, Mac, arp};
use oxok_rt::page::SharedPage;

/// The program name of the neighbour table's server.
pub const SERVER_NAME: &str = "arpd";
/// Word 0 of a request for the table page (reply: word 0 is 0, word 1 the
/// slot of a read-only capability for it in the caller's list).
pub const OP_TABLE: u64 = u64::from_be_bytes(*b"ARPTABLE");
/// Where a stack maps the table (a page of the file buffer's 2 MiB).
pub const TABLE_VA: u64 = 0x5200_0010_0000;
/// Where `arpd` keeps its own, writable mapping.
pub const SERVER_VA: u64 = TABLE_VA + oxok_abi::layout::PAGE_SIZE;
/// What [`Resolver::outgoing`] decided for a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outgoing {
    /// Not an ARP request of this stack's: send it.
    Send,
    /// A request the table answered: not sent, its reply comes next.
    Answered,
    /// A request the table cannot answer: send it, then [`Resolver::asked`].
    Ask(Ip),
}

/// How long a stack with an address waiting sleeps at most.
const WAITING_SLEEP_MS: u64 = 10;
/// Milliseconds [`Resolver::asked`] waits for an answer at most.
const ASKED_POLLS: u32 = 5;
/// Addresses a stack waits on at once.
const WAITING: usize = 4;
/// How long an address waits for an answer before it is forgotten (the
/// stack asks again on its own schedule).
const WAIT_MS: u64 = 3_000;

/// The table, mapped read-only here. Its page stays mapped (a fork child
/// keeps it too); every read checks first that the page at [`TABLE_VA`]
/// is still its server's, so a table whose server ended, or whose page
/// the next server's replaced, answers nothing.
pub struct Table {
    /// The server whose page it is.
    server: u64,
}

impl Table {
    /// Asks the neighbour server for its table and maps it: `NotFound`
    /// with no server, the server's or the kernel's error otherwise.
    pub fn attach() -> Result<Table, Error> {
        let server = crate::fs::locate::neighbour_server().ok_or(Error::NotFound)?;
        if SharedPage::readable(TABLE_VA).is_some() {
            // Already here (this process asked before, or its parent did
            // before a fork): kept if it is this server's page, else it is
            // an ended server's, no longer written.
            if owned_by(server) {
                return Ok(Table { server });
            }
            sys::page_unmap(0, TABLE_VA)?;
        }
        let slot = ask(server)?;
        let mapped = sys::page_map(0, slot, TABLE_VA, pte::NO_EXECUTE | pte::LIBOS_SHARED);
        let _ = sys::cap_drop(slot);
        mapped?;
        if SharedPage::readable(TABLE_VA).is_some() && owned_by(server) {
            Ok(Table { server })
        } else {
            let _ = sys::page_unmap(0, TABLE_VA);
            Err(Error::BadAddress)
        }
    }

    /// What the table says about `ip` (`NotATable` once its server ended).
    pub fn lookup(&self, ip: Ip) -> Answer {
        match SharedPage::readable(TABLE_VA) {
            Some(page) if owned_by(self.server) => table::lookup(page.words(), ip),
            _ => Answer::NotATable,
        }
    }

    /// True while its server lives and its page is the one mapped here
    /// (an ended server's page stays readable, but nobody writes it).
    pub fn live(&self) -> bool {
        owned_by(self.server)
    }
}

/// True if the page at [`TABLE_VA`] is a frame `server` owns (the exposed
/// frame table says so; the frame of an ended owner is an orphan).
fn owned_by(server: u64) -> bool {
    exposed::frame_of(TABLE_VA).and_then(exposed::frame_entry).is_some_and(|f| u64::from(f.owner) == server)
}

/// How a stack on `ring` (this machine at `mac`, `ip`) gets ARP's answers:
/// from the neighbour table when a server shares one, else by owning the
/// ARP filter; neither when another program owns ARP and shares nothing
/// (the stack then reaches only peers it already knows).
pub fn arp(ring: &Ring, mac: Mac, ip: Ip) -> Arp {
    match Table::attach() {
        Ok(t) => Arp { filter: None, resolver: Some(Resolver::new(t, mac, ip)) },
        Err(_) => Arp { filter: Filter::install(ring, &filters::arp(), None).ok(), resolver: None },
    }
}

/// What [`arp`] found: at most one of the two.
pub struct Arp {
    /// The ARP filter, this stack's own (keep it as long as the stack).
    pub filter: Option<Filter>,
    /// The resolver for the stack's device.
    pub resolver: Option<Resolver>,
}

impl Arp {
    /// True if the stack has neither.
    pub fn is_none(&self) -> bool {
        self.filter.is_none() && self.resolver.is_none()
    }
}

/// Asks `server` for the table: the slot of the capability it granted. A
/// server that does not serve yet (it started beside this process) or is
/// busy with another stack's request is asked again, [`ASK_TRIES`] times
/// [`ASK_PAUSE_MS`] apart.
fn ask(server: u64) -> Result<u64, Error> {
    let mut msg = [0u64; pct::WORDS];
    let mut tries = 0;
    loop {
        msg[0] = OP_TABLE;
        let answer = pct::call(server, &msg).and_then(|(_, reply)| match reply[0] {
            0 => Ok(reply[1]),
            code => Err(Error::from_code(code).unwrap_or(Error::Denied)),
        });
        match answer {
            // Not serving yet, its table not made yet, or serving another
            // transfer.
            Err(Error::Denied | Error::WouldBlock | Error::Busy) if tries < ASK_TRIES => {
                tries += 1;
                crate::time::sleep_ms(ASK_PAUSE_MS)?;
            }
            other => return other,
        }
    }
}

/// How many times [`ask`] asks a server that does not serve yet.
const ASK_TRIES: u32 = 50;
/// Its pause between tries.
const ASK_PAUSE_MS: u64 = 20;

/// A stack's ARP through the shared table (see the module documentation).
pub struct Resolver {
    table: Table,
    mac: Mac,
    ip: Ip,
    /// Addresses asked for and not yet answered, with the tick they give up.
    waiting: [Option<(Ip, u64)>; WAITING],
    /// A request the table answered when it was sent: its reply is
    /// received next.
    ready: Option<Ip>,
    /// Replies the stack received from the table.
    pub answered: u64,
}

impl Resolver {
    /// A resolver for the stack at `mac`, `ip`.
    pub fn new(table: Table, mac: Mac, ip: Ip) -> Resolver {
        Resolver { table, mac, ip, waiting: [None; WAITING], ready: None, answered: 0 }
    }

    /// For a packet the stack sends: what to do with it.
    pub fn outgoing(&mut self, p: &[u8]) -> Outgoing {
        let Some(ip) = arp::asked_by(p, self.mac) else { return Outgoing::Send };
        if let Answer::At(_) = self.table.lookup(ip) {
            self.ready = Some(ip);
            return Outgoing::Answered;
        }
        Outgoing::Ask(ip)
    }

    /// After the stack's request for `ip` went out: waits a little for
    /// `arpd` to hear the answer (it usually comes within a millisecond:
    /// a stack that would block meanwhile need not), then lets `ip` wait
    /// for later receives.
    pub fn asked(&mut self, ip: Ip) {
        for _ in 0..ASKED_POLLS {
            if let Answer::At(_) = self.table.lookup(ip) {
                self.ready = Some(ip);
                return;
            }
            if crate::time::sleep_ms(1).is_err() {
                break;
            }
        }
        let until = ticks() + super::stack::ms_to_ticks(WAIT_MS);
        let free = self.waiting.iter().position(|w| w.is_none_or(|(a, _)| a == ip));
        // With every entry taken, the oldest deadline goes.
        let i =
            free.unwrap_or_else(|| (0..WAITING).min_by_key(|&i| self.waiting[i].map_or(0, |(_, t)| t)).unwrap_or(0));
        self.waiting[i] = Some((ip, until));
    }

    /// A reply for the stack to receive, written into `out`: a request the
    /// table answered, or a waiting address it now knows. Its length.
    pub fn incoming(&mut self, out: &mut [u8]) -> Option<usize> {
        if let Some(ip) = self.ready.take()
            && let Answer::At(mac) = self.table.lookup(ip)
        {
            self.answered += 1;
            return arp::reply_from(out, mac, ip, self.mac, self.ip);
        }
        if self.waiting.iter().all(Option::is_none) {
            return None;
        }
        let now = ticks();
        for w in &mut self.waiting {
            let Some((ip, until)) = *w else { continue };
            match self.table.lookup(ip) {
                Answer::At(mac) => {
                    *w = None;
                    self.answered += 1;
                    return arp::reply_from(out, mac, ip, self.mac, self.ip);
                }
                _ if now >= until => *w = None,
                _ => {}
            }
        }
        None
    }

    /// True while the table's server lives ([`Table::live`]).
    pub fn live(&self) -> bool {
        self.table.live()
    }

    /// The longest a stack may sleep before it polls again: `ms`, none
    /// with an answer ready to receive, a few milliseconds while an
    /// address waits for one (it arrives in `arpd`'s ring, which wakes
    /// nobody here).
    pub fn sleep_ms(&self, ms: u64) -> u64 {
        if self.ready.is_some() {
            0
        } else if self.waiting.iter().any(Option::is_some) {
            ms.min(WAITING_SLEEP_MS)
        } else {
            ms
        }
    }
}
