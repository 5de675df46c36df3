//! The calling process: its id and its end.

use crate::exec::ExitStatus;

/// The libOS's flag in the exit word (one of the kernel's
/// [`EXIT_PROGRAM_BITS`](oxok_abi::EXIT_PROGRAM_BITS), which it keeps
/// unread): the process ended by a signal's default action, and the code
/// beside it is 128 + the signal.
pub const SIGNALLED: u64 = 1 << 33;

/// Ends the program with `code`.
pub fn exit(code: i32) -> ! {
    exit_word(u64::from(code as u32))
}

/// Ends the program as signal `sig`'s default action does: its waiting
/// parent learns the signal ([`ExitStatus::Signalled`]; a shell's `$?`
/// reads 128 + `sig`).
pub fn exit_signalled(sig: i32) -> ! {
    exit_word(SIGNALLED | u64::from((128 + sig) as u32))
}

/// Ends the program the way `status` says another one ended (a stand-in
/// passing on its program's end).
pub fn exit_as(status: ExitStatus) -> ! {
    match (status, status.signal()) {
        (ExitStatus::Exited(code), _) => exit(code),
        (_, Some(sig)) => exit_signalled(sig),
        (_, None) => exit(status.code()),
    }
}

/// Set when the exit path starts.
static EXITING: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

fn exit_word(word: u64) -> ! {
    // A second exit — a signal's default action arriving while the exit
    // path runs, in the transfer that interrupted it — ends the process at
    // once: the path it interrupted may hold a lock the cleanup would wait
    // for forever, and that cleanup is under way.
    if !EXITING.swap(true, core::sync::atomic::Ordering::AcqRel) {
        crate::fd::close_all();
        // Closed connections get a moment to deliver their last data and FIN.
        crate::net::socket::drain(2000);
    }
    let _ = crate::sys::env_exit(word);
    // env_exit never returns; if the kernel refused, spin rather than run on.
    loop {
        core::hint::spin_loop();
    }
}

/// The calling environment's id.
pub fn env_id() -> u64 {
    crate::sys::env_self().map(|[id]| id).unwrap_or(0)
}

/// What an environment's resource account holds and allows (see the
/// kernel's `env_limit` and `account_info` calls).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    /// The account's number (the `account` field of environment-table rows).
    pub account: u64,
    /// Frames charged to the account and every account nested in it.
    pub frames: u64,
    /// Its own frame limit (`ACCOUNT_UNLIMITED` for none).
    pub frame_limit: u64,
    /// Environments charged to it and every account nested in it.
    pub envs: u64,
    /// Its own environment limit.
    pub env_limit: u64,
}

/// Puts the environment named by capability `env_slot` (0: the caller
/// itself) into a new sub-account of its current one, limited to `frames`
/// frames and `envs` environments. Everything it creates from then on is
/// charged there; limits only narrow (every ancestor's still binds).
pub fn limit(env_slot: u64, frames: u64, envs: u64) -> Result<(), crate::abi::Error> {
    crate::sys::env_limit(env_slot, frames, envs).map(|[]| ())
}

/// The account of the environment named by `env_slot` (0: the caller).
pub fn usage(env_slot: u64) -> Result<Usage, crate::abi::Error> {
    let [frames, frame_limit, account] = crate::sys::account_info(env_slot, crate::abi::ACCOUNT_FRAMES)?;
    let [envs, env_limit, _] = crate::sys::account_info(env_slot, crate::abi::ACCOUNT_ENVS)?;
    Ok(Usage { account, frames, frame_limit, envs, env_limit })
}
