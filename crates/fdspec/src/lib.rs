//! Descriptor specs (Xok §5.2: ExOS hands an exec'd program its open
//! descriptors). A parent passes descriptor `n` to a spawned child as the
//! environment variable `OXOK_FD<n>=<spec>`, where `<spec>` names the object:
//!
//! | spec | object |
//! | --- | --- |
//! | `console` | the console |
//! | `null` | the null device (`/dev/null`: reads end at once, writes vanish) |
//! | `pipe:r:0x<va>` / `pipe:w:0x<va>` | a pipe's read or write end; the parent mapped its frame at `va` in the child |
//! | `file:<server>:<handle>` | an open file: the file server's environment id and the child's handle there |
//! | `file:<server>:<handle>;<share>:<flags>:<path>` | the same with its origin ([`Origin`]): the share id (hex) of the server's open-file record, the open flags, the absolute path (the rest of the text) |
//!
//! [`Spec::parse`] and [`Spec`]'s `Display` are inverses; the libOS's
//! descriptor code does the mapping and reopening, this crate only the
//! text. A pure `no_std` crate, host-tested.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(test)]
mod tests;

use core::fmt;

/// The prefix of the descriptor variables.
pub const PREFIX: &str = "OXOK_FD";

/// Which end of a pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PipeSide {
    /// The read end (`r`).
    Read,
    /// The write end (`w`).
    Write,
}

/// The object a descriptor spec names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spec {
    /// The console.
    Console,
    /// The null device.
    Null,
    /// A pipe end whose frame is mapped at `va`.
    Pipe {
        /// Which end.
        side: PipeSide,
        /// Where the parent mapped the pipe's frame in the child.
        va: u64,
    },
    /// An open file in a file server.
    File {
        /// The server's environment id.
        server: u64,
        /// The child's handle in the server.
        handle: u64,
    },
}

impl Spec {
    /// The object `text` names; `None` for anything malformed (unknown
    /// kind, missing or extra fields, bad numbers).
    pub fn parse(text: &str) -> Option<Spec> {
        let mut parts = text.split(':');
        let spec = match (parts.next()?, parts.next(), parts.next()) {
            ("console", None, None) => Spec::Console,
            ("null", None, None) => Spec::Null,
            ("pipe", Some(side), Some(va)) => {
                let side = match side {
                    "r" => PipeSide::Read,
                    "w" => PipeSide::Write,
                    _ => return None,
                };
                Spec::Pipe { side, va: u64::from_str_radix(va.strip_prefix("0x")?, 16).ok()? }
            }
            ("file", Some(server), Some(handle)) => {
                Spec::File { server: server.parse().ok()?, handle: handle.parse().ok()? }
            }
            _ => return None,
        };
        parts.next().is_none().then_some(spec)
    }

    /// The kind word of a spec (the text before the first `:`), to route
    /// it without parsing the rest.
    pub fn kind_of(text: &str) -> &str {
        text.split(':').next().unwrap_or("")
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Spec::Console => f.write_str("console"),
            Spec::Null => f.write_str("null"),
            Spec::Pipe { side, va } => {
                let side = match side {
                    PipeSide::Read => "r",
                    PipeSide::Write => "w",
                };
                write!(f, "pipe:{side}:{va:#x}")
            }
            Spec::File { server, handle } => write!(f, "file:{server}:{handle}"),
        }
    }
}

/// Where an inherited open file came from, appended to its `file:` spec
/// after `;`: the share id naming the server's open-file record the parent
/// and child now share, the open flags and the path it was opened by. A
/// checkpointer needs them to re-open the file and to give every process
/// sharing the record one record again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin<'a> {
    /// The share id (nonzero).
    pub share: u64,
    /// The open flags the entry keeps.
    pub flags: u64,
    /// The absolute path (may hold `:` and `;`, not a newline or NUL).
    pub path: &'a str,
}

impl<'a> Origin<'a> {
    /// Splits `text` into the spec before the first `;` and the origin
    /// after it (`None` if there is none or it is malformed).
    pub fn split(text: &'a str) -> (&'a str, Option<Origin<'a>>) {
        let Some((base, rest)) = text.split_once(';') else { return (text, None) };
        let mut parts = rest.splitn(3, ':');
        let origin = (|| {
            let share = u64::from_str_radix(parts.next()?, 16).ok().filter(|&s| s != 0)?;
            let flags = parts.next()?.parse().ok()?;
            let path = parts.next()?;
            let ok = path.starts_with('/') && !path.contains(['\n', '\0']);
            ok.then_some(Origin { share, flags, path })
        })();
        (base, origin)
    }
}

impl fmt::Display for Origin<'_> {
    /// `;<share hex>:<flags>:<path>`, to append to a `file:` spec.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ";{:x}:{}:{}", self.share, self.flags, self.path)
    }
}

/// True for an `OXOK_FD…` variable (`KEY=value` or just the key).
pub fn is_fd_var(entry: &str) -> bool {
    entry.starts_with(PREFIX)
}

/// The descriptor number of variable `key` (`OXOK_FD<n>`), if it is one
/// below `max`.
pub fn fd_of(key: &str, max: usize) -> Option<usize> {
    key.strip_prefix(PREFIX)?.parse::<usize>().ok().filter(|&n| n < max)
}
