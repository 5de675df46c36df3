//! Symbolic links on the disk. C-FFS keeps them and never follows one: a
//! path through a link is its `Symlink` error, which reaches this server
//! as `Loop` ([`err`](super::convert::err)). The server follows them as
//! the RAM file system does inside its server: the path is rewritten with
//! the link's target — relative to the link's directory unless absolute,
//! both inside this file system — and the request asked once more. A path
//! that needs more than [`MAX_HOPS`] links is a loop. Nothing is looked at
//! twice for a path with no link in it: the rewriting starts only when
//! C-FFS met one.

use alloc::string::String;
use alloc::vec::Vec;
use oxok_cffs::Kind as DiskKind;
use oxok_ramfs::FsError;

use super::DiskFiles;
use super::convert::err;

/// Links one path may pass through (Linux's limit).
pub const MAX_HOPS: usize = 40;

impl DiskFiles {
    /// `path` (normal, absolute) with every symbolic link on its way
    /// replaced by its target, and its last component's too when
    /// `follow_last`. A component that is missing ends the rewriting: the
    /// request reports it.
    pub(super) fn unlinked(&mut self, path: &str, follow_last: bool) -> Result<String, FsError> {
        let mut p = String::from(path);
        for _ in 0..=MAX_HOPS {
            let comps: Vec<&str> = p.split('/').filter(|c| !c.is_empty()).collect();
            let mut next = None;
            let mut at = String::new();
            for (i, c) in comps.iter().enumerate() {
                at.push('/');
                at.push_str(c);
                if i + 1 == comps.len() && !follow_last {
                    break;
                }
                match self.fs()?.stat(&at) {
                    Ok(st) if st.kind == DiskKind::Symlink => {
                        let target = self.fs()?.readlink(&at).map_err(err)?;
                        let target = core::str::from_utf8(&target).map_err(|_| FsError::NotFound)?;
                        let base = &at[..at.rfind('/').unwrap_or(0)];
                        let mut rewritten = if target.starts_with('/') {
                            String::from(target)
                        } else {
                            alloc::format!("{base}/{target}")
                        };
                        for rest in &comps[i + 1..] {
                            rewritten.push('/');
                            rewritten.push_str(rest);
                        }
                        next = Some(oxok_libos::fs::normalize(&rewritten));
                        break;
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            match next {
                Some(n) => p = n,
                None => return Ok(p),
            }
        }
        Err(FsError::Loop)
    }

    /// Runs `op` on `path`; if it met a link on the way (`Loop`), runs it
    /// once more on `path` without its links (the last component's too
    /// when `follow_last`). `Loop` again is a loop, or a link where `op`
    /// needs something else.
    pub(super) fn following<T>(
        &mut self,
        path: &str,
        follow_last: bool,
        op: impl FnMut(&mut Self, &str) -> Result<T, FsError>,
    ) -> Result<T, FsError> {
        self.following_to(path, follow_last, op).map(|(t, _)| t)
    }

    /// [`following`](Self::following), and the path `op` succeeded on if
    /// it was not `path` (an open keeps the path with no link in it).
    pub(super) fn following_to<T>(
        &mut self,
        path: &str,
        follow_last: bool,
        mut op: impl FnMut(&mut Self, &str) -> Result<T, FsError>,
    ) -> Result<(T, Option<String>), FsError> {
        match op(self, path) {
            Err(FsError::Loop) => {
                let p = self.unlinked(path, follow_last)?;
                if p == path {
                    return Err(FsError::Loop);
                }
                let t = op(self, &p)?;
                Ok((t, Some(p)))
            }
            r => r.map(|t| (t, None)),
        }
    }

    /// [`following`](Self::following) for a request on two paths, neither
    /// last component followed (`rename`, `link`, a copy).
    pub(super) fn following_both<T>(
        &mut self,
        a: &str,
        b: &str,
        mut op: impl FnMut(&mut Self, &str, &str) -> Result<T, FsError>,
    ) -> Result<T, FsError> {
        match op(self, a, b) {
            Err(FsError::Loop) => {
                let (pa, pb) = (self.unlinked(a, false)?, self.unlinked(b, false)?);
                if pa == a && pb == b {
                    return Err(FsError::Loop);
                }
                op(self, &pa, &pb)
            }
            r => r,
        }
    }
}
