//! The network calls: `net_info`, `ring_bind`, `ring_unbind`,
//! `net_template`, `net_send` (filters: `calls/filter.rs`).

use super::Cx;
use super::args::EnvCap;
use super::check::frame_cap;
use crate::mem::access::FrameRef;
use crate::mem::addr::Pfn;
use crate::mem::{PAGE_SIZE, user};
use crate::net;
use alloc::vec::Vec;
use oxok_abi::Error;
use oxok_abi::net::{PACKET_MAX, RING_DATA_FRAMES_MAX, TX_PIECES_MAX, TxTemplate, template_violation};
use oxok_cap::Rights;

/// The NIC's address and the receive counters.
pub fn net_info(_cx: &mut Cx<'_>) -> Result<[u64; 3], Error> {
    net::with(|n| {
        let mac = n.nic.as_ref().ok_or(Error::NotFound)?.mac();
        let mut word = [0u8; 8];
        word[..6].copy_from_slice(&mac);
        Ok([u64::from_le_bytes(word), n.received, n.unclaimed])
    })
}

/// Binds a ring over the frames named by the `count` capability slots at
/// `slots` (header frame first).
pub fn ring_bind(cx: &mut Cx<'_>, slots: u64, count: u64) -> Result<[u64; 1], Error> {
    let count = usize::try_from(count).ok().filter(|&c| (2..=RING_DATA_FRAMES_MAX + 1).contains(&c));
    let count = count.ok_or(Error::Invalid)?;
    let mut raw = [0u8; 8 * (RING_DATA_FRAMES_MAX + 1)];
    user::copy_from_user(&cx.env()?.space, slots, &mut raw[..count * 8])?;
    let caller = cx.caller;
    let mut frames: Vec<FrameRef> = Vec::new();
    frames.try_reserve(count).map_err(|_| Error::NoMemory)?;
    let mut pfns = [Pfn::from_word(0); RING_DATA_FRAMES_MAX + 1];
    for (i, chunk) in raw[..count * 8].chunks_exact(8).enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let pfn = frame_cap(&mut cx.k.envs, caller, u64::from_le_bytes(w), Rights::READ | Rights::WRITE)?;
        // Only the caller's own frames: a capability someone granted is no
        // licence to have the kernel write packets into their memory.
        let frame = FrameRef::owned_by(pfn, caller).ok_or(Error::Denied)?;
        if pfns[..i].contains(&pfn) {
            return Err(Error::Invalid);
        }
        pfns[i] = pfn;
        frames.push(frame);
    }
    crate::mem::heap::reserve(64 + count * 8)?;
    // The ring is a record the caller's account pays for until unbound.
    let env = cx.env()?;
    let charge = crate::account::Charge::amount(env.account, oxok_account::Amount::heap(crate::account::RING_HEAP))?;
    let header = frames.remove(0);
    let ring = net::with(|n| n.bind(caller, header, frames))?;
    for &pfn in &pfns[..count] {
        net::pin(pfn);
    }
    charge.commit();
    if let Some(env) = cx.k.envs.get(caller) {
        env.heap_charged += crate::account::RING_HEAP;
    }
    crate::env::publish_heap();
    Ok([ring])
}

/// Unbinds one of the caller's rings and unpins its frames.
pub fn ring_unbind(cx: &mut Cx<'_>, ring: u64) -> Result<[u64; 0], Error> {
    net::unbind_ring(&mut cx.k.envs, cx.caller, ring)?;
    Ok([])
}

fn template_from(bytes: &[u8; 16]) -> TxTemplate {
    let mut t = TxTemplate::default();
    t.mac.copy_from_slice(&bytes[0..6]);
    t.ip.copy_from_slice(&bytes[8..12]);
    t.port_lo = u16::from_le_bytes([bytes[12], bytes[13]]);
    t.port_hi = u16::from_le_bytes([bytes[14], bytes[15]]);
    t
}

/// Sets the transmit template of the environment named by `env_slot`.
pub fn net_template(cx: &mut Cx<'_>, env_slot: EnvCap, template: u64) -> Result<[u64; 0], Error> {
    let caller = cx.caller;
    let target = env_slot.with(Rights::WRITE)?;
    let mut bytes = [0u8; 16];
    user::copy_from_user(&cx.env()?.space, template, &mut bytes)?;
    if bytes[6..8] != [0, 0] {
        return Err(Error::Invalid);
    }
    let t = template_from(&bytes);
    if t.port_lo > t.port_hi {
        return Err(Error::Invalid);
    }
    let is_boot_program = cx.env()?.parent.is_none();
    let (target_parent, account) = cx.k.envs.get(target).map(|e| (e.parent, e.account)).ok_or(Error::BadEnv)?;
    crate::mem::heap::reserve(64)?;
    // A first template is a new record: the target's account pays.
    let first = !net::with(|n| Ok(n.templates.contains_key(&target)))?;
    let heap = oxok_account::Amount::heap(crate::account::TEMPLATE_HEAP);
    let charge = if first { Some(crate::account::Charge::amount(account, heap)?) } else { None };
    net::with(|n| {
        let mine = n.templates.get(&caller).copied();
        let allowed = match mine {
            // A template holder may give a child (or itself) a narrower one.
            Some(m) => t.within(&m) && (target == caller || target_parent == Some(caller)),
            // A boot program sets the first templates: its own or a child's.
            None => is_boot_program && (target == caller || target_parent == Some(caller)),
        };
        if !allowed {
            return Err(Error::Denied);
        }
        n.templates.insert(target, t);
        Ok(())
    })?;
    if let Some(charge) = charge {
        charge.commit();
        if let Some(env) = cx.k.envs.get(target) {
            env.heap_charged += crate::account::TEMPLATE_HEAP;
        }
    }
    Ok([])
}

/// Reports an environment's transmit template.
pub fn net_template_get(_cx: &mut Cx<'_>, env_slot: EnvCap) -> Result<[u64; 3], Error> {
    let target = env_slot.with(Rights::READ)?;
    net::with(|n| {
        let t = n.templates.get(&target).ok_or(Error::NotFound)?;
        let mut mac = [0u8; 8];
        mac[..6].copy_from_slice(&t.mac);
        let mut ip = [0u8; 8];
        ip[..4].copy_from_slice(&t.ip);
        Ok([u64::from_le_bytes(mac), u64::from_le_bytes(ip), u64::from(t.port_lo) | u64::from(t.port_hi) << 16])
    })
}

/// Sends one packet gathered from the pieces described at `pieces`: every
/// piece is checked first (a frame the caller may read, within its page,
/// the whole within one packet), then gathered straight into a transmit
/// buffer of the device and checked against the caller's template there; a
/// refused packet gives the buffer back unsent. One copy, and no packet
/// buffer on the kernel stack to clear.
pub fn net_send(cx: &mut Cx<'_>, pieces: u64, count: u64) -> Result<[u64; 1], Error> {
    let count = usize::try_from(count).ok().filter(|&c| (1..=TX_PIECES_MAX).contains(&c)).ok_or(Error::Invalid)?;
    let mut raw = [0u8; 16 * TX_PIECES_MAX];
    user::copy_from_user(&cx.env()?.space, pieces, &mut raw[..count * 16])?;
    let caller = cx.caller;
    let mut gather: [Option<(FrameRef, usize, usize)>; TX_PIECES_MAX] = Default::default();
    let mut len = 0usize;
    for (rec, piece_at) in raw[..count * 16].chunks_exact(16).zip(gather.iter_mut()) {
        let word = |i: usize| u64::from_le_bytes([rec[i], rec[i + 1], rec[i + 2], rec[i + 3], 0, 0, 0, 0]);
        let mut slot = [0u8; 8];
        slot.copy_from_slice(&rec[..8]);
        let (offset, piece) = (word(8) as usize, word(12) as usize);
        if offset + piece > PAGE_SIZE as usize || len + piece > PACKET_MAX {
            return Err(Error::Invalid);
        }
        let pfn = frame_cap(&mut cx.k.envs, caller, u64::from_le_bytes(slot), Rights::READ)?;
        // A frame the capability names is an environment's, never the kernel's.
        let frame = FrameRef::of_any_env(pfn).ok_or(Error::Denied)?;
        *piece_at = Some((frame, offset, piece));
        len += piece;
    }
    net::with(|n| {
        let t = n.templates.get(&caller).copied().ok_or(Error::Denied)?;
        let nic = n.nic.as_mut().ok_or(Error::NotFound)?;
        let refused = &mut n.refused;
        nic.send(|buf| {
            let packet = buf.get_mut(..len).ok_or(Error::Invalid)?;
            let mut at = 0;
            for (frame, offset, piece) in gather.iter().flatten() {
                frame.read(*offset, &mut packet[at..at + piece]);
                at += piece;
            }
            if let Some(why) = template_violation(&t, packet) {
                log::debug!("env {caller}: packet refused by its template: {why}");
                *refused += 1;
                return Err(Error::Denied);
            }
            Ok(len)
        })?;
        n.sent += 1;
        Ok([len as u64])
    })
}
