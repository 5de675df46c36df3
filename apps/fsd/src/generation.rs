//! The server's generation (`proto::op::GENERATION`, `flags::PREFETCH`): a
//! count of the requests that can change a file's bytes, bumped before
//! each, and kept in word 0 of one page every client may map read-only. A
//! client that got a small file's bytes with its open serves its reads of
//! them from its buffer while the page still says the generation of the
//! open: nothing that could change the file has arrived since.
//!
//! Word 1 of the page is the *name generation* (`flags::AHEAD`): a count
//! of the requests that could change what a path names, bumped likewise.
//! A client holding handles the server opened ahead uses one for an open
//! of its path while the page still says the name generation they were
//! opened at.
//!
//! The page is made at the first `GENERATION` request (a server nobody
//! asks costs nothing); until then no open prefetches, since no client
//! could tell when its bytes went stale. What the page tells a client is
//! only how often files changed on this server, never which or by whom.

use core::sync::atomic::Ordering;
use oxok_libos::abi::{ANY_FRAME, layout::pte, rights};
use oxok_libos::fs::buffer::GENERATION_SERVED_VA;
use oxok_libos::fs::proto::{self, Status, flags, op};
use oxok_libos::pct::Msg;
use oxok_libos::rt::page::SharedPage;
use oxok_libos::sys;

/// The count and, once asked for, its page.
pub struct Generation {
    /// Starts at 1: a prefetch's generation is never 0, which the reply
    /// uses for "nothing prefetched".
    count: u64,
    /// The name generation (also from 1).
    names: u64,
    /// The page's capability (kept, to grant) and the page as mapped here.
    page: Option<(u64, SharedPage)>,
}

impl Default for Generation {
    fn default() -> Generation {
        Generation { count: 1, names: 1, page: None }
    }
}

impl Generation {
    /// The generation prefetched bytes hold at, if clients can see it.
    pub fn current(&self) -> Option<u64> {
        self.page.as_ref().map(|_| self.count)
    }

    /// The name generation handles opened ahead hold at, if clients can
    /// see it.
    pub fn names(&self) -> Option<u64> {
        self.page.as_ref().map(|_| self.names)
    }

    /// Counts `req` if it can change a file's bytes, or what a path names,
    /// before it does.
    pub fn note(&mut self, req: &Msg) {
        let arg = proto::arg_of(req[0]);
        let op = proto::op_of(req[0]);
        let changes = match op {
            op::WRITE | op::WRITE_BUF | op::TRUNCATE | op::COPY => true,
            // A write may wait behind a granted open: files prefetched
            // before it read stale from now on.
            op::OPEN => arg & (flags::TRUNCATE | flags::BEHIND) != 0,
            _ => false,
        };
        // Every request but those that only read, move a position, change
        // an open file's bytes or let go of a handle: an op added later
        // counts until it is known not to rename anything.
        let renames = match op {
            op::PATH | op::CLOSE | op::READ | op::WRITE | op::SEEK | op::FSTAT | op::STAT | op::READDIR => false,
            op::DUP | op::TRUNCATE | op::INFO | op::BUFFER | op::READ_BUF | op::WRITE_BUF | op::FSYNC => false,
            op::SYNC | op::SET_TIMES | op::READLINK | op::WRITE_BACK | op::GENERATION | op::SETTLE => false,
            op::BEHIND_PAGE => false,
            op::OPEN => arg & flags::CREATE != 0,
            _ => true,
        };
        if changes {
            self.count += 1;
        }
        if renames {
            self.names += 1;
        }
        if changes || renames {
            self.publish();
        }
    }

    /// Counts a change of a file's bytes that no request of its own made
    /// (a write left behind), before it is made.
    pub fn changed(&mut self) {
        self.count += 1;
        self.publish();
    }

    fn publish(&self) {
        if let Some((_, page)) = &self.page {
            page.words()[0].store(self.count, Ordering::Release);
            page.words()[1].store(self.names, Ordering::Release);
        }
    }

    /// `GENERATION`: a read-only capability for the page, granted to the
    /// caller being served; its slot in the caller's list.
    pub fn grant(&mut self) -> Result<u64, Status> {
        if self.page.is_none() {
            self.page = Some(make_page(self.count, self.names).ok_or(Status::NoSpace)?);
        }
        let (cap, _) = self.page.as_ref().ok_or(Status::NoSpace)?;
        sys::pct_grant(*cap, rights::READ).map(|[slot]| slot).map_err(|_| Status::NoSpace)
    }
}

/// A fresh page holding `count` and `names`, mapped writable here: its
/// capability and the page.
fn make_page(count: u64, names: u64) -> Option<(u64, SharedPage)> {
    let [cap, _frame] = sys::frame_alloc(ANY_FRAME).ok()?;
    if sys::page_map(0, cap, GENERATION_SERVED_VA, pte::WRITABLE | pte::NO_EXECUTE).is_err() {
        let _ = sys::frame_free(cap);
        return None;
    }
    let Some(page) = SharedPage::writable(GENERATION_SERVED_VA) else {
        let _ = sys::page_unmap(0, GENERATION_SERVED_VA);
        let _ = sys::frame_free(cap);
        return None;
    };
    page.words()[0].store(count, Ordering::Release);
    page.words()[1].store(names, Ordering::Release);
    Some((cap, page))
}
