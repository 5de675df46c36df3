//! `console_write`, `console_read`: guarded by a capability for the
//! console (`Name::console()`), which boot programs get from the kernel and
//! parents pass on.

use super::Cx;
use crate::arch::serial;
use crate::mem::{PAGE_SIZE, user};
use oxok_abi::layout::user_range_ok;
use oxok_abi::{CONSOLE_WRITE_MAX, Error};
use oxok_cap::{Name, Rights};

/// Checks that the caller holds a console capability with `need`
/// (`Denied` otherwise). The call names no slot — the console is one
/// resource and its calls keep their arguments — so the list is searched.
fn console_cap(cx: &mut Cx<'_>, need: Rights) -> Result<(), Error> {
    cx.env()?.caps.find_dominating(&Name::console(), need).map(|_| ()).ok_or(Error::Denied)
}

/// Writes user bytes to the console; all or nothing.
pub fn console_write(cx: &mut Cx<'_>, ptr: u64, len: u64) -> Result<[u64; 1], Error> {
    if len > CONSOLE_WRITE_MAX {
        return Err(Error::Invalid);
    }
    if !user_range_ok(ptr, len) {
        return Err(Error::BadAddress);
    }
    // A zero-length range below USER_TOP is accepted wherever it starts
    // (`user_range_ok`): no page of it needs to be mapped.
    if len == 0 {
        return Ok([0]);
    }
    console_cap(cx, Rights::WRITE)?;
    let env = cx.env()?;
    // Check every page first: a failure must leave no output behind.
    let mut page = ptr & !(PAGE_SIZE - 1);
    while page < ptr + len {
        env.space.translate_user(page.max(ptr), false).ok_or(Error::BadAddress)?;
        page += PAGE_SIZE;
    }
    let mut buf = [0u8; 512];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        user::copy_from_user(&env.space, ptr + done, &mut buf[..n])?;
        crate::logline::program_write(&buf[..n]);
        done += n as u64;
    }
    Ok([len])
}

/// Takes waiting console input; never blocks.
pub fn console_read(cx: &mut Cx<'_>, ptr: u64, len: u64) -> Result<[u64; 1], Error> {
    take(cx, ptr, len, crate::console::read)
}

/// Copies waiting console input without taking it.
pub fn console_peek(cx: &mut Cx<'_>, ptr: u64, len: u64) -> Result<[u64; 1], Error> {
    take(cx, ptr, len, crate::console::peek)
}

/// `console_read` and `console_peek`: every check, then `copy` (which
/// takes the bytes or not) into the caller's buffer.
fn take(cx: &mut Cx<'_>, ptr: u64, len: u64, copy: fn(&mut [u8]) -> usize) -> Result<[u64; 1], Error> {
    if len > CONSOLE_WRITE_MAX {
        return Err(Error::Invalid);
    }
    if !user_range_ok(ptr, len) {
        return Err(Error::BadAddress);
    }
    if len == 0 {
        return Ok([0]);
    }
    console_cap(cx, Rights::READ)?;
    let want = (len as usize).min(crate::console::pending()).min(512);
    let env = cx.env()?;
    // Check the whole buffer first: a failure must consume nothing.
    let mut page = ptr & !(PAGE_SIZE - 1);
    while len > 0 && page < ptr + len {
        env.space.translate_user(page.max(ptr), true).ok_or(Error::BadAddress)?;
        page += PAGE_SIZE;
    }
    let mut buf = [0u8; 512];
    let n = copy(&mut buf[..want]);
    user::copy_to_user(&env.space, ptr, &buf[..n])?;
    Ok([n as u64])
}

/// Checks a buffer for the aux calls: every page of `[ptr, ptr+len)`
/// mapped (writable if `write`).
fn aux_buffer(cx: &mut Cx<'_>, ptr: u64, len: u64, write: bool) -> Result<(), Error> {
    if len > CONSOLE_WRITE_MAX {
        return Err(Error::Invalid);
    }
    if !user_range_ok(ptr, len) {
        return Err(Error::BadAddress);
    }
    let env = cx.env()?;
    let mut page = ptr & !(PAGE_SIZE - 1);
    while page < ptr + len {
        env.space.translate_user(page.max(ptr), write).ok_or(Error::BadAddress)?;
        page += PAGE_SIZE;
    }
    Ok(())
}

/// Sends bytes on the second serial line, as many as it takes now.
pub fn aux_write(cx: &mut Cx<'_>, ptr: u64, len: u64) -> Result<[u64; 1], Error> {
    if !serial::aux::present() {
        return Err(Error::NotFound);
    }
    aux_buffer(cx, ptr, len, false)?;
    console_cap(cx, Rights::WRITE)?;
    let env = cx.env()?;
    let mut buf = [0u8; 512];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        user::copy_from_user(&env.space, ptr + done, &mut buf[..n])?;
        let took = serial::aux::write(&buf[..n]);
        done += took as u64;
        if took < n {
            break;
        }
    }
    Ok([done])
}

/// Takes the bytes waiting on the second serial line; never blocks.
pub fn aux_read(cx: &mut Cx<'_>, ptr: u64, len: u64) -> Result<[u64; 1], Error> {
    if !serial::aux::present() {
        return Err(Error::NotFound);
    }
    aux_buffer(cx, ptr, len, true)?;
    console_cap(cx, Rights::READ)?;
    let mut buf = [0u8; 512];
    let want = (len as usize).min(buf.len());
    let n = serial::aux::read(&mut buf[..want]);
    user::copy_to_user(&cx.env()?.space, ptr, &buf[..n])?;
    Ok([n as u64])
}
