//! The application area, made when an environment asks for it.

use super::Cx;
use crate::env;
use crate::mem::access::KernelFrame;
use oxok_abi::Error;
use oxok_abi::layout::{APP_AREA, pte};

/// Gives the caller its application area: a zeroed kernel frame mapped
/// writable at `APP_AREA`. Check, then perform: the account is charged for
/// the frame (a guard), the frame taken, and the mapping made with its
/// tables charged (`map_frame`); a refusal anywhere gives the frame and
/// the charge back (tables made stay, as for `page_map`). Once per
/// environment at most, so kept out of the dispatch's inlined arms.
#[inline(never)]
pub fn app_area_make(cx: &mut Cx<'_>) -> Result<[u64; 0], Error> {
    let env = cx.env()?;
    if env.app_area.is_some() {
        return Err(Error::Exists);
    }
    let charge = crate::account::Charge::frames(env.account, 1)?;
    let area = KernelFrame::alloc().ok_or(Error::NoMemory)?;
    env::map_frame(env, APP_AREA, (&area).into(), pte::WRITABLE | pte::NO_EXECUTE)?;
    charge.commit();
    env.kernel_frames += 1;
    env.app_area = Some(area);
    env.publish();
    Ok([])
}
