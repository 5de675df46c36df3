//! The calling process: its id and its end.

/// Ends the program with `code`.
pub fn exit(code: i32) -> ! {
    crate::fd::close_all();
    // Closed connections get a moment to deliver their last data and FIN.
    crate::net::socket::drain(2000);
    let _ = crate::sys::env_exit(code as i64 as u64);
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
