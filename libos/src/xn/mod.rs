//! XN from a program: the calls (60–69) with their refusals as values,
//! waiting for requests on a wakeup predicate over the exposed XN table,
//! the table's readers, and access to bound buffer-cache pages.
//!
//! A library file system registers its templates ([`register`]), makes
//! roots ([`root`]), changes metadata only through [`alloc`], [`free`] and
//! [`modify`] (the kernel runs the templates' `owns`/`acl` before and
//! after), brings blocks into the cache with [`read`], maps them with
//! [`bind`] (data blocks writable, metadata read-only) and writes them back
//! with [`write`] and [`flush`]. Every refusal names its reason
//! ([`oxok_abi::xn::refuse`]) and block.

mod bindings;
mod disk;
mod page;

use crate::sys;
use core::fmt;
use oxok_abi::Error;
use oxok_abi::xn::{BLOCK_SIZE, REJECTED, XN_OLDEST_PENDING, XN_TABLE, XnHeader, XnRoot, XnRow, refuse};

pub use bindings::Bindings;
pub use disk::{WINDOW, WINDOW_MIN_PAGES, WINDOW_PAGES, XnDisk};
pub use page::{page, page_mut};

/// Why an XN call did not happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XnError {
    /// The call itself failed (no disk, bad address, no memory…).
    Sys(Error),
    /// XN refused: a [`refuse`] code, the block concerned and a detail
    /// (for a tainted pointer, the child).
    Refused {
        /// The [`refuse`] code.
        code: u64,
        /// The block.
        block: u64,
        /// The child of a tainted pointer, else 0.
        detail: u64,
    },
    /// Registration refused template `index`: a `reject` code.
    Rejected {
        /// The [`oxok_abi::xn::reject`] code.
        code: u64,
        /// Which template.
        index: u64,
    },
}

impl From<Error> for XnError {
    fn from(e: Error) -> XnError {
        XnError::Sys(e)
    }
}

/// The name of a refusal code.
pub fn refusal_name(code: u64) -> &'static str {
    match code {
        refuse::OUT_OF_RANGE => "out of range",
        refuse::NOT_FREE => "not free",
        refuse::NOT_ALLOCATED => "not allocated",
        refuse::NOT_METADATA => "not metadata",
        refuse::DENIED => "denied by acl",
        refuse::OWNS_MISMATCH => "owns mismatch",
        refuse::BAD_OWNS => "bad owns",
        refuse::UDF_FAULT => "udf fault",
        refuse::TAINTED_POINTER => "tainted pointer",
        refuse::IN_FLIGHT => "in flight",
        refuse::NOT_EMPTY => "not empty",
        refuse::ALREADY_BOUND => "already bound",
        refuse::NOT_BOUND => "not cached",
        refuse::METADATA_WRITABLE => "metadata writable",
        refuse::BUSY => "busy",
        refuse::NO_MEMORY => "no memory",
        refuse::BAD_FS => "bad file system",
        refuse::WILL_FREE => "will free",
        refuse::TAINTED => "tainted",
        _ => "?",
    }
}

impl fmt::Display for XnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            XnError::Sys(e) => write!(f, "{e}"),
            XnError::Refused { code, block, detail: 0 } => {
                write!(f, "refused: {} (code {code}, block {block})", refusal_name(code))
            }
            XnError::Refused { code, block, detail } => {
                write!(f, "refused: {} (code {code}, block {block}, child {detail})", refusal_name(code))
            }
            XnError::Rejected { code, index } => write!(f, "template {index} rejected (code {code})"),
        }
    }
}

fn result(r: Result<[u64; 3], Error>) -> Result<u64, XnError> {
    let [code, a, b] = r?;
    match code {
        0 => Ok(a),
        REJECTED => Err(XnError::Rejected { code: a, index: b }),
        _ => Err(XnError::Refused { code, block: a, detail: b }),
    }
}

/// Registers a file system with `templates` (each in the layout of
/// [`oxok_abi::xn`]); its number.
pub fn register(templates: &[&[u8]]) -> Result<u32, XnError> {
    let mut bytes = alloc::vec::Vec::new();
    for t in templates {
        bytes.extend_from_slice(t);
    }
    let r = sys::xn_register(bytes.as_ptr() as u64, bytes.len() as u64, templates.len() as u64);
    result(r).map(|fs| fs as u32)
}

/// Makes `block` a root of `fs` with template `ty` and `content`.
pub fn root(fs: u32, block: u64, ty: u32, content: &[u8; BLOCK_SIZE]) -> Result<(), XnError> {
    result(sys::xn_root(u64::from(fs), block, u64::from(ty), content.as_ptr() as u64)).map(|_| ())
}

/// Allocates `start..start+len` of type `ty` to `meta`, now `content`.
pub fn alloc(meta: u64, content: &[u8; BLOCK_SIZE], start: u64, len: u64, ty: u32) -> Result<(), XnError> {
    result(sys::xn_alloc(meta, content.as_ptr() as u64, start, len, u64::from(ty))).map(|_| ())
}

/// Frees `start..start+len` from `meta`, now `content`.
pub fn free(meta: u64, content: &[u8; BLOCK_SIZE], start: u64, len: u64) -> Result<(), XnError> {
    result(sys::xn_free(meta, content.as_ptr() as u64, start, len)).map(|_| ())
}

/// Changes `meta` to `content`, owning the same blocks.
pub fn modify(meta: u64, content: &[u8; BLOCK_SIZE]) -> Result<(), XnError> {
    result(sys::xn_modify(meta, content.as_ptr() as u64)).map(|_| ())
}

/// Starts reading `block` into the cache; the request's sequence number
/// (0: already cached).
pub fn read_start(block: u64) -> Result<u64, XnError> {
    result(sys::xn_read(block))
}

/// Reads `block` into the cache and waits for it.
pub fn read(block: u64) -> Result<(), XnError> {
    let seq = read_start(block)?;
    if seq == 0 {
        return Ok(());
    }
    wait(seq)?;
    // Cached now, unless the read failed: asking again says which (0:
    // cached), whatever the size of the registry.
    match read_start(block)? {
        0 => Ok(()),
        _ => Err(XnError::Refused { code: refuse::NOT_BOUND, block, detail: 0 }),
    }
}

/// Brings every block of `blocks` into the cache with as many requests in
/// flight at once as the disk takes (C-FFS reads a directory's small files
/// together this way), then waits for them all.
pub fn prefetch(blocks: &[u64]) -> Result<(), XnError> {
    let mut last = 0;
    let mut i = 0;
    while i < blocks.len() {
        match read_start(blocks[i]) {
            Ok(seq) => {
                last = last.max(seq);
                i += 1;
            }
            // Every request slot is taken: wait for what is in flight.
            Err(XnError::Sys(Error::WouldBlock)) if last != 0 => {
                wait(last)?;
                last = 0;
            }
            Err(e) => return Err(e),
        }
    }
    wait(last)
}

/// Maps `block`'s cache frame at `va` with the [`oxok_abi::xn::rights`]
/// `want`.
pub fn bind(block: u64, va: u64, want: u32) -> Result<(), XnError> {
    result(sys::xn_bind(block, va, u64::from(want))).map(|_| ())
}

/// Starts writing `block`; the request's sequence number.
pub fn write(block: u64) -> Result<u64, XnError> {
    result(sys::xn_write(block))
}

/// Starts writing data block `dst` from the cache frame of block `src`
/// (XCP); the request's sequence number.
pub fn write_from(dst: u64, src: u64) -> Result<u64, XnError> {
    result(sys::xn_write_from(dst, src))
}

/// Starts `xn_write_from` for the first of `pairs` (destination, source)
/// that can go now, up to the kernel's batch step: how many went (at least
/// one) and the last one's request sequence number; the first pair's
/// refusal or error when none could.
pub fn write_from_batch(pairs: &[[u64; 2]]) -> Result<(usize, u64), XnError> {
    let [code, done, seq] = sys::xn_write_from_batch(pairs.as_ptr() as u64, pairs.len() as u64)?;
    match code {
        0 => Ok((done as usize, seq)),
        _ => Err(XnError::Refused { code, block: done, detail: seq }),
    }
}

/// Starts `xn_write` of the first of `blocks` that can go now, up to the
/// kernel's batch step: how many went (at least one) and the last one's
/// request sequence number; the first block's refusal or error when none
/// could.
pub fn write_batch(blocks: &[u64]) -> Result<(usize, u64), XnError> {
    let [code, done, seq] = sys::xn_write_batch(blocks.as_ptr() as u64, blocks.len() as u64)?;
    match code {
        0 => Ok((done as usize, seq)),
        _ => Err(XnError::Refused { code, block: done, detail: seq }),
    }
}

/// Starts a flush; the request's sequence number.
pub fn flush() -> Result<u64, XnError> {
    result(sys::xn_flush())
}

/// Takes `block` out of the cache.
pub fn evict(block: u64) -> Result<(), XnError> {
    result(sys::xn_evict(block)).map(|_| ())
}

/// Takes out of the cache each of the first of `blocks` (up to the
/// kernel's batch step) that `evict` would take, skipping the rest: how
/// many it looked at (at least one) and how many it took.
pub fn evict_batch(blocks: &[u64]) -> Result<(usize, usize), XnError> {
    let [_, looked, evicted] = sys::xn_evict_batch(blocks.as_ptr() as u64, blocks.len() as u64)?;
    Ok((looked as usize, evicted as usize))
}

/// Writes `block`, flushes, and waits for both: the block is durable.
pub fn write_sync(block: u64) -> Result<(), XnError> {
    let w = write(block)?;
    wait(w)?;
    let f = flush()?;
    wait(f)
}

/// Sleeps until request `seq` (and every one before it) completed.
pub fn wait(seq: u64) -> Result<(), XnError> {
    if seq == 0 {
        return Ok(());
    }
    let pred = crate::exec::WAIT_PRED;
    let code = oxok_pred::Builder::new()
        .load_u64(XN_TABLE + XN_OLDEST_PENDING)
        .gt_param(0)
        .build()
        .map_err(|_| Error::Invalid)?;
    let bytes = code.as_bytes();
    crate::pred::install(pred, bytes)?;
    sys::pred_param(0, pred, 0, seq)?;
    sys::env_sleep(1 << pred)?;
    Ok(())
}

/// Waits until nothing registered is missing from the disk's catalogue.
pub fn wait_catalog() -> Result<(), XnError> {
    for _ in 0..10_000 {
        match header() {
            Some(h) if h.catalog_pending == 0 => return Ok(()),
            Some(h) => wait(h.oldest_pending)?,
            None => return Err(XnError::Sys(Error::NotFound)),
        }
        crate::time::sleep_ms(1)?;
    }
    Err(XnError::Sys(Error::WouldBlock))
}

/// The table's header; `None` without a disk.
pub fn header() -> Option<XnHeader> {
    crate::exposed::xn_header().filter(|h| h.present == 1)
}

/// Registry row `i` (of `header().rows`; a free one's block is
/// `XN_ROW_EMPTY`).
pub fn row(i: usize) -> Option<XnRow> {
    crate::exposed::xn_row(i)
}

/// Every registry row in use (each entry has its own while it is
/// registered, up to `XN_ROWS_MAX` entries; rows are not in block order).
pub fn rows() -> impl Iterator<Item = XnRow> {
    let n = header().map_or(0, |h| h.rows as usize);
    (0..n.min(oxok_abi::xn::XN_ROWS_MAX)).filter_map(row).filter(|r| r.block != oxok_abi::xn::XN_ROW_EMPTY)
}

/// The registry row of `block`, if it is allocated (and listed).
pub fn row_of(block: u64) -> Option<XnRow> {
    rows().find(|r| r.block == block)
}

/// Root row `i`.
pub fn root_row(i: usize) -> Option<XnRoot> {
    crate::exposed::xn_root(i)
}

/// Word `i` of the exposed free map (blocks `64i..64i + 64`, a set bit
/// allocated).
pub fn free_word(i: u64) -> Option<u64> {
    crate::exposed::xn_free_word(i)
}

/// Whether `block` is free in the exposed free map.
pub fn is_free(block: u64) -> Option<bool> {
    free_word(block / 64).map(|w| w & (1 << (block % 64)) == 0)
}
