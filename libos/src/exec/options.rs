//! [`SpawnOptions`]: what a child started by
//! [`spawn_with`](super::spawn_with) gets besides its program and argv —
//! its descriptors and its environment — without changing the caller's
//! own descriptor table (the shell gives a pipe end as a child's standard
//! output this way).

use crate::fd::inherit::ChildTable;
use crate::fd::{self, Handle, IoError, MAX_FDS};

/// What the child's descriptor `n` is.
#[derive(Clone, Default)]
enum Choice {
    /// The caller's descriptor `n`, if [`SpawnOptions::inherit`] is on.
    #[default]
    Inherit,
    /// Closed.
    Close,
    /// This object.
    Use(Handle),
}

/// Options for [`spawn_with`](super::spawn_with), in the manner of
/// `std::process::Command`:
///
/// ```ignore
/// let (r, w) = fd::pipe::pipe()?;
/// let mut opts = SpawnOptions::new();
/// opts.stdout(w);                       // the child's fd 1 is the write end
/// let child = exec::spawn_with("ls", &["ls"], &opts)?;
/// drop(opts);                           // the caller's copy of the end goes
/// ```
///
/// By default the child gets every descriptor of the caller (as it is at
/// the time of the spawn) and the caller's environment variables.
#[derive(Clone, Default)]
pub struct SpawnOptions<'a> {
    fds: [Choice; MAX_FDS],
    inherit: bool,
    env: Option<&'a [&'a str]>,
    bad_fd: bool,
    held: bool,
    calls: [u64; MAX_CALLS],
    principal: Option<u64>,
}

/// How many environments [`SpawnOptions::call`] can name.
pub const MAX_CALLS: usize = 4;

impl<'a> SpawnOptions<'a> {
    /// Every descriptor inherited, the caller's environment.
    pub fn new() -> SpawnOptions<'a> {
        SpawnOptions { inherit: true, ..SpawnOptions::default() }
    }

    /// The child's descriptor `n` is `file` (`n` < [`MAX_FDS`], else the
    /// spawn fails with `BadFd`).
    pub fn fd(&mut self, n: usize, file: Handle) -> &mut Self {
        self.set(n, Choice::Use(file))
    }

    /// The child's standard input is `file`.
    pub fn stdin(&mut self, file: Handle) -> &mut Self {
        self.fd(fd::STDIN, file)
    }

    /// The child's standard output is `file`.
    pub fn stdout(&mut self, file: Handle) -> &mut Self {
        self.fd(fd::STDOUT, file)
    }

    /// The child's standard error is `file`.
    pub fn stderr(&mut self, file: Handle) -> &mut Self {
        self.fd(fd::STDERR, file)
    }

    /// The child's descriptor `n` is closed.
    pub fn close(&mut self, n: usize) -> &mut Self {
        self.set(n, Choice::Close)
    }

    /// Whether the descriptors not set with [`fd`](Self::fd) or
    /// [`close`](Self::close) come from the caller's table (default) or
    /// are closed.
    pub fn inherit(&mut self, on: bool) -> &mut Self {
        self.inherit = on;
        self
    }

    /// The child's environment is `envp` (`KEY=value` strings) instead of
    /// the caller's.
    pub fn env(&mut self, envp: &'a [&'a str]) -> &mut Self {
        self.env = Some(envp);
        self
    }

    /// Whether the child is left created but not started: it runs only
    /// once the caller calls [`Child::start`](super::Child::start). A shell
    /// announces a background job (`[1] 1027`) before the job can print.
    pub fn held(&mut self, on: bool) -> &mut Self {
        self.held = on;
        self
    }

    /// Whether [`held`](Self::held) is on.
    pub(super) fn is_held(&self) -> bool {
        self.held
    }

    /// The child also gets a call-only capability for environment `env`
    /// (see [`crate::callcap`]), granted before it runs: it may then reach
    /// `env` by protected control transfer and directed yield. The caller
    /// must hold a capability for `env` with call and grant (it created
    /// `env`, or was handed one); otherwise, or beyond [`MAX_CALLS`], the
    /// child goes without.
    pub fn call(&mut self, env: u64) -> &mut Self {
        if let Some(free) = self.calls.iter_mut().find(|c| **c == 0) {
            *free = env;
        }
        self
    }

    /// The child acts as principal `p` (see [`crate::principal`]): a
    /// capability on `/8/p`, minted from the caller's on `/8`, is granted
    /// to it before it runs. A caller that holds no `/8` with grant cannot
    /// give one, and the child goes without.
    pub fn principal(&mut self, p: u64) -> &mut Self {
        self.principal = Some(p);
        self
    }

    /// The principal named with [`principal`](Self::principal).
    pub(super) fn principal_of(&self) -> Option<u64> {
        self.principal
    }

    /// The environments named with [`call`](Self::call).
    pub(super) fn calls(&self) -> [u64; MAX_CALLS] {
        self.calls
    }

    /// The explicit environment, if one was given.
    pub(super) fn explicit_env(&self) -> Option<&'a [&'a str]> {
        self.env
    }

    fn set(&mut self, n: usize, choice: Choice) -> &mut Self {
        match self.fds.get_mut(n) {
            Some(c) => *c = choice,
            None => self.bad_fd = true,
        }
        self
    }

    /// The child's table: the objects chosen, and the caller's where
    /// inherited.
    pub(super) fn table(&self) -> Result<ChildTable, IoError> {
        if self.bad_fd {
            return Err(IoError::BadFd);
        }
        let mut table: ChildTable = Default::default();
        for (n, (slot, choice)) in table.iter_mut().zip(&self.fds).enumerate() {
            *slot = match choice {
                Choice::Inherit if self.inherit => fd::get(n).ok(),
                Choice::Inherit | Choice::Close => None,
                Choice::Use(h) => Some(h.clone()),
            };
        }
        Ok(table)
    }
}
