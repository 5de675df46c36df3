//! The argument classes of the call table (`oxok_abi::arg_class`): each
//! register is decoded and validated here, once, by the generated dispatch
//! (`kernel/src/syscall.rs`) before the handler runs, and handlers take the
//! typed values. A class's errors are the ones its entry in
//! `oxok_abi::arg_class::ALL` lists (the contract the fuzzer checks).

use super::Cx;
use super::check::{cap_error, cap_in, env_of};
use crate::env::{EnvId, EnvTable};
use crate::mem::access::FrameRef;
use crate::mem::addr::Pfn;
use oxok_abi::layout::{PAGE_SIZE, pte};
use oxok_abi::{ANY_FRAME, Error};
use oxok_cap::{Cap, Kind};

pub use oxok_cap::Rights;

/// One argument class: how a raw register becomes a typed value.
pub trait Arg: Sized {
    /// Decodes `raw`, the caller's register, checking what the class
    /// promises (and nothing that depends on other arguments).
    fn decode(cx: &mut Cx<'_>, raw: u64) -> Result<Self, Error>;
}

/// A plain number the call itself interprets (`Word` in the table).
pub type Word = u64;
/// A user address of a buffer the call copies from or to; checked by the
/// copy (`BadAddress`).
pub type UserPtr = u64;
/// A count of bytes, records or pages.
pub type Len = u64;

impl Arg for u64 {
    #[inline(always)]
    fn decode(_: &mut Cx<'_>, raw: u64) -> Result<u64, Error> {
        Ok(raw)
    }
}

/// A position in the caller's capability list, not yet looked up (an
/// empty or out-of-range slot is `BadCap` when it is). Not a CPU time slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapSlot(pub u64);

impl CapSlot {
    /// The capability there (a copy): `BadCap` if empty or out of range.
    pub fn cap(self, envs: &mut EnvTable, caller: EnvId) -> Result<Cap, Error> {
        cap_in(envs, caller, self.0)
    }

    /// What `read` makes of the capability there, read in place (no copy):
    /// `BadCap` if empty or out of range.
    #[inline(always)]
    pub fn read<R>(
        self,
        envs: &mut EnvTable,
        caller: EnvId,
        read: impl FnOnce(&Cap) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let env = envs.get(caller).ok_or(Error::BadEnv)?;
        if self.0 == 0 && env.caps.first_implied() {
            return read(&env.own_cap());
        }
        read(env.caps.get(self.0).map_err(cap_error)?)
    }
}

impl Arg for CapSlot {
    #[inline(always)]
    fn decode(_: &mut Cx<'_>, raw: u64) -> Result<CapSlot, Error> {
        Ok(CapSlot(raw))
    }
}

/// A capability slot holding a capability for a live environment
/// (`BadCap`: empty, out of range or another kind; `BadEnv`: the
/// environment has ended). The rights are checked by [`EnvCap::with`],
/// since what a call needs can depend on its other arguments.
#[derive(Clone, Copy, Debug)]
pub struct EnvCap {
    /// The slot it was found in.
    pub slot: CapSlot,
    /// The environment it names.
    pub id: EnvId,
    /// The capability's rights. Its name is exactly the environment's
    /// (`env_of` takes nothing else), so a check needs only these.
    rights: Rights,
}

impl EnvCap {
    /// Looks up `slot` in `caller`'s list (also for slots read from user
    /// records). Inlined always: the arms of the generated dispatch decode
    /// with it, and the result passed through memory costs a quarter again.
    #[inline(always)]
    pub fn find(envs: &mut EnvTable, caller: EnvId, slot: CapSlot) -> Result<EnvCap, Error> {
        // The caller's own capability, implied (the common case: a call on
        // the caller itself): its name is the caller's, its rights all.
        if slot.0 == 0 && envs.get(caller).ok_or(Error::BadEnv)?.caps.first_implied() {
            return Ok(EnvCap { slot, id: caller, rights: Rights::ALL });
        }
        let (id, rights) = slot.read(envs, caller, |cap| Ok((env_of(cap)?, cap.rights)))?;
        if !envs.alive(id) {
            return Err(Error::BadEnv);
        }
        Ok(EnvCap { slot, id, rights })
    }

    /// The environment, if the capability carries `need` (`Denied`).
    pub fn with(&self, need: Rights) -> Result<EnvId, Error> {
        if !self.rights.contains(need) {
            return Err(Error::Denied);
        }
        Ok(self.id)
    }
}

impl Arg for EnvCap {
    #[inline(always)]
    fn decode(cx: &mut Cx<'_>, raw: u64) -> Result<EnvCap, Error> {
        EnvCap::find(&mut cx.k.envs, cx.caller, CapSlot(raw))
    }
}

/// A capability slot holding a capability for a live frame of the right
/// generation (`BadCap` otherwise). Rights are checked by [`FrameCap::with`]
/// and [`FrameCap::take`].
#[derive(Debug)]
pub struct FrameCap {
    /// The slot it was found in.
    pub slot: CapSlot,
    /// The frame it names, as the frame table showed it when the
    /// capability was found (user memory of the capability's generation).
    frame: FrameRef,
    /// The capability's rights. Its name is exactly this frame's, of its
    /// current generation (checked when found), so a check needs only these.
    rights: Rights,
}

impl FrameCap {
    /// Looks up `slot` in `caller`'s list (also for slots read from user
    /// records). Inlined always, as [`EnvCap::find`].
    #[inline(always)]
    pub fn find(envs: &mut EnvTable, caller: EnvId, slot: CapSlot) -> Result<FrameCap, Error> {
        let (pfn, generation, rights) = slot.read(envs, caller, |cap| {
            let comps = cap.name.components();
            if cap.name.kind() != Some(Kind::Frame) || comps.len() != 3 {
                return Err(Error::BadCap);
            }
            Ok((Pfn::from_word(comps[1]), comps[2], cap.rights))
        })?;
        // One look at the frame table: user memory (not free, reserved,
        // the kernel's, retired or being revoked) of this generation.
        let frame = FrameRef::of_any_env_at(pfn, generation).ok_or(Error::BadCap)?;
        Ok(FrameCap { slot, frame, rights })
    }

    /// The frame number, if the capability carries `need` (`Denied`).
    pub fn with(&self, need: Rights) -> Result<Pfn, Error> {
        self.allows(need).map(|()| self.frame.pfn())
    }

    /// The frame itself, if the capability carries `need` (`Denied`).
    pub fn take(self, need: Rights) -> Result<FrameRef, Error> {
        self.allows(need).map(|()| self.frame)
    }

    /// `Denied` unless the capability carries `need`.
    fn allows(&self, need: Rights) -> Result<(), Error> {
        if self.rights.contains(need) { Ok(()) } else { Err(Error::Denied) }
    }
}

impl Arg for FrameCap {
    #[inline(always)]
    fn decode(cx: &mut Cx<'_>, raw: u64) -> Result<FrameCap, Error> {
        FrameCap::find(&mut cx.k.envs, cx.caller, CapSlot(raw))
    }
}

/// A page of user space a page call may name: page-aligned, below
/// `USER_TOP` and not the application area's page, which is the
/// kernel's (`BadAddress`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserPage(u64);

impl UserPage {
    /// `va` as a user page.
    #[inline(always)]
    pub fn new(va: u64) -> Result<UserPage, Error> {
        // The application area is user space's last page.
        const _: () = assert!(oxok_abi::layout::APP_AREA == oxok_abi::layout::USER_TOP - PAGE_SIZE);
        if va.is_multiple_of(PAGE_SIZE) && va < oxok_abi::layout::APP_AREA {
            Ok(UserPage(va))
        } else {
            Err(Error::BadAddress)
        }
    }

    /// Its address.
    pub const fn va(self) -> u64 {
        self.0
    }
}

impl Arg for UserPage {
    #[inline(always)]
    fn decode(_: &mut Cx<'_>, raw: u64) -> Result<UserPage, Error> {
        UserPage::new(raw)
    }
}

/// Page-table entry flags a program may set: `pte::WRITABLE`,
/// `pte::NO_EXECUTE` and the libOS bits (`Invalid` for any other bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageFlags(u64);

impl PageFlags {
    const ALLOWED: u64 = pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_BITS;

    /// `bits` as flags.
    pub fn new(bits: u64) -> Result<PageFlags, Error> {
        if bits & !Self::ALLOWED != 0 { Err(Error::Invalid) } else { Ok(PageFlags(bits)) }
    }

    /// The bits.
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// Whether the mapping is writable.
    pub const fn writable(self) -> bool {
        self.0 & pte::WRITABLE != 0
    }

    /// What the environment capability must carry to map or protect with
    /// these flags: write, and execute for an executable mapping
    /// (`NO_EXECUTE` clear) — execute permission is a right of its own.
    pub const fn env_need(self) -> Rights {
        if self.0 & pte::NO_EXECUTE == 0 { Rights::WRITE.union(Rights::EXECUTE) } else { Rights::WRITE }
    }
}

impl Arg for PageFlags {
    #[inline(always)]
    fn decode(_: &mut Cx<'_>, raw: u64) -> Result<PageFlags, Error> {
        PageFlags::new(raw)
    }
}

impl Arg for Rights {
    /// `oxok_abi::rights` bits (`Invalid` for an unknown bit).
    #[inline(always)]
    fn decode(_: &mut Cx<'_>, raw: u64) -> Result<Rights, Error> {
        u8::try_from(raw).ok().and_then(Rights::from_bits).ok_or(Error::Invalid)
    }
}

/// Which frame `frame_alloc` takes: any free one, or a frame number (whose
/// existence the allocation checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameChoice {
    /// `ANY_FRAME`.
    Any,
    /// This frame number.
    At(Pfn),
}

impl Arg for FrameChoice {
    #[inline(always)]
    fn decode(_: &mut Cx<'_>, raw: u64) -> Result<FrameChoice, Error> {
        Ok(if raw == ANY_FRAME { FrameChoice::Any } else { FrameChoice::At(Pfn::from_word(raw)) })
    }
}

/// A control-transfer target word (`oxok_abi::call_target`): an
/// environment id (0: none) and the slot of a capability for it with call,
/// checked by the transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// The environment the low 32 bits name (`None` for 0, and for a
    /// number no environment ever had: see [`Target::named`]).
    pub env: Option<EnvId>,
    /// Whether the low 32 bits name anything (are not 0).
    pub named: bool,
    /// The capability slot (high 32 bits).
    pub slot: CapSlot,
}

impl Arg for Target {
    #[inline(always)]
    fn decode(_: &mut Cx<'_>, raw: u64) -> Result<Target, Error> {
        let env = raw & u64::from(u32::MAX);
        Ok(Target { env: EnvId::decode(env), named: env != 0, slot: CapSlot(raw >> 32) })
    }
}

/// The environment id in a `Word` argument that names one (`pct_reply`'s
/// caller, `pct_wait`'s callee): `BadEnv` for a number no environment
/// ever had. Whether it is alive is the call's business.
pub fn env_word(word: u64) -> Result<EnvId, Error> {
    EnvId::decode(word).ok_or(Error::BadEnv)
}

/// The nine message words of a protected control transfer (`Msg` in the
/// table): not a numbered argument register, so nothing to decode; the
/// transfer carries the message registers from the frame itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg;

impl Arg for Msg {
    #[inline(always)]
    fn decode(_: &mut Cx<'_>, _: u64) -> Result<Msg, Error> {
        Ok(Msg)
    }
}
