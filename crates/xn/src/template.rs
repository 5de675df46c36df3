//! Templates: the three verified UDFs of one metadata type, and what running
//! them yields.

use alloc::vec::Vec;

use oxok_abi::xn::{ANYONE, BLOCK_SIZE, INSN_SIZE, MAX_PRINCIPALS, TEMPLATE_HEADER, TemplateHeader, func};

use crate::rerun::{Raw, collect, finish};
use crate::{Creds, Emit, Fault, Owned, SetError, Udf, VerifyError, verify};

/// Extents an `owns` result has room for before it runs.
const OWNS_ROOM: usize = 16;

/// A verified template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// `owns`.
    pub owns: Udf,
    /// `acl`.
    pub acl: Udf,
    /// `size`.
    pub size: Udf,
}

/// What an `owns` run can fail with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnsError {
    /// The UDF stopped.
    Fault(Fault),
    /// Its output is not a valid owned set.
    Set(SetError),
}

/// The grants an `acl` run emitted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Acl {
    grants: [(u64, u32); MAX_PRINCIPALS],
    len: usize,
}

impl Acl {
    /// The (principal, rights) pairs.
    pub fn grants(&self) -> &[(u64, u32)] {
        self.grants.get(..self.len).unwrap_or(&[])
    }

    /// Whether some grant to [`ANYONE`] or to one of `creds` carries every
    /// right in `need` (rights from different grants are not combined).
    pub fn allows(&self, creds: &(impl Creds + ?Sized), need: u32) -> bool {
        self.grants().iter().any(|&(p, r)| r & need == need && (p == ANYONE || creds.holds(p)))
    }
}

impl Template {
    /// Parses and verifies a template (layout in [`oxok_abi::xn`]).
    pub fn parse(bytes: &[u8]) -> Result<Template, VerifyError> {
        let head: &[u8; TEMPLATE_HEADER] =
            bytes.get(..TEMPLATE_HEADER).and_then(|h| h.try_into().ok()).ok_or(VerifyError::BadTemplate)?;
        let h = TemplateHeader::from_bytes(head).ok_or(VerifyError::BadTemplate)?;
        let lens = [h.owns, h.acl, h.size].map(|n| usize::from(n) * INSN_SIZE);
        if lens.contains(&0) || TEMPLATE_HEADER + lens.iter().sum::<usize>() != bytes.len() {
            return Err(VerifyError::BadTemplate);
        }
        let (o, rest) = bytes[TEMPLATE_HEADER..].split_at(lens[0]);
        let (a, s) = rest.split_at(lens[1]);
        Ok(Template { owns: verify(o, func::OWNS)?, acl: verify(a, func::ACL)?, size: verify(s, func::SIZE)? })
    }

    /// Runs `owns` over `block`: the canonical set of blocks it points to,
    /// for a disk of `nblocks` blocks and a file system with `types`
    /// templates.
    pub fn owns(&self, block: &[u8; BLOCK_SIZE], nblocks: u64, types: u32) -> Result<Owned, OwnsError> {
        let mut out: Vec<Raw> = Vec::new();
        // Room for a directory block's worth at once (one allocation,
        // not one per doubling).
        out.try_reserve(OWNS_ROOM).map_err(|_| OwnsError::Fault(Fault::NoMemory))?;
        self.owns.run(block, &mut |e| collect(&mut out, e)).map_err(OwnsError::Fault)?;
        finish(&out, nblocks, types)
    }

    /// Runs `acl` over `block`.
    pub fn acl(&self, block: &[u8; BLOCK_SIZE]) -> Result<Acl, Fault> {
        let mut acl = Acl::default();
        self.acl.run(block, &mut |e| {
            let Emit::Grant { principal, rights } = e else { return Ok(()) };
            let slot = acl.grants.get_mut(acl.len).ok_or(Fault::TooManyResults)?;
            *slot = (principal, rights);
            acl.len += 1;
            Ok(())
        })?;
        Ok(acl)
    }

    /// Runs `size` over `block`: the last `size` result, or 0.
    pub fn size(&self, block: &[u8; BLOCK_SIZE]) -> Result<u64, Fault> {
        let mut size = 0;
        self.size.run(block, &mut |e| {
            if let Emit::Size(s) = e {
                size = s;
            }
            Ok(())
        })?;
        Ok(size)
    }
}
