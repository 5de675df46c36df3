//! The calling process: its id and its end.

/// Ends the program with `code`.
pub fn exit(code: i32) -> ! {
    crate::fd::close_all();
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
