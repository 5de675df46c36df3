//! Canned error responses: every status the server refuses with, in both
//! connection variants, built once at start in a few pages with their
//! checksums, so an error costs no more to send than a file.

use alloc::vec::Vec;
use oxok_cheetah::checksum;
use oxok_http::Status;
use oxok_http::response::{self, Connection};
use oxok_libos::Error;

use crate::pages::{PAGE, Pages};

/// The statuses kept.
const STATUSES: [Status; 10] = [
    Status::BadRequest,
    Status::NotFound,
    Status::MethodNotAllowed,
    Status::PayloadTooLarge,
    Status::UriTooLong,
    Status::HeadersTooLarge,
    Status::InternalError,
    Status::NotImplemented,
    Status::Unavailable,
    Status::VersionNotSupported,
];
/// Bytes reserved per response (a slot never crosses a page).
const SLOT: usize = 512;

/// One canned response.
#[derive(Clone, Copy, Debug, Default)]
pub struct Canned {
    /// Byte address in the pages.
    pub at: u32,
    /// The head's length (a `HEAD` response).
    pub head_len: u32,
    /// The whole response's length.
    pub len: u32,
    /// Sums of the head and of the whole response.
    pub head_sum: u64,
    pub full_sum: u64,
}

/// The canned responses and their pages.
pub struct Errors {
    pub pages: Pages,
    pub all: Vec<Canned>,
}

impl Errors {
    /// Builds them.
    pub fn new() -> Result<Errors, Error> {
        let count = STATUSES.len() * 2;
        let per_page = PAGE / SLOT;
        let pages = Pages::new(count.div_ceil(per_page))?;
        let mut buf = alloc::vec![0u8; pages.count() * PAGE];
        let mut all = Vec::new();
        for (i, &status) in STATUSES.iter().enumerate() {
            for (v, conn) in [Connection::KeepAlive, Connection::Close].into_iter().enumerate() {
                let mut head = Vec::new();
                response::error(&mut head, status, conn, Some(oxok_http::Method::Head));
                let mut full = Vec::new();
                response::error(&mut full, status, conn, Some(oxok_http::Method::Get));
                let at = (i * 2 + v) * SLOT;
                let len = full.len().min(SLOT);
                buf[at..at + len].copy_from_slice(&full[..len]);
                all.push(Canned {
                    at: at as u32,
                    head_len: head.len() as u32,
                    len: len as u32,
                    head_sum: checksum::add(0, &head),
                    full_sum: checksum::add(0, &full[..len]),
                });
            }
        }
        for (p, chunk) in buf.chunks(PAGE).enumerate() {
            pages.write_page(p, chunk);
        }
        Ok(Errors { pages, all })
    }

    /// The index of `status`'s response (`keep_alive` variant or not).
    pub fn index(&self, status: Status, keep_alive: bool) -> usize {
        let i = STATUSES.iter().position(|&s| s == status).unwrap_or(6); // 500 for anything else
        i * 2 + usize::from(!keep_alive)
    }
}
