//! Calls that only report.

use super::Cx;
use crate::mem::{PAGE_SIZE, frame};
use oxok_abi::Error;

/// Does nothing.
pub fn null(_cx: &mut Cx<'_>) -> Result<[u64; 0], Error> {
    Ok([])
}

/// Usable and free frames, and the frame size.
pub fn mem_info(_cx: &mut Cx<'_>) -> Result<[u64; 3], Error> {
    let (usable, free) = frame::with(|f| (f.usable() as u64, f.free_count() as u64));
    Ok([usable, free, PAGE_SIZE])
}
