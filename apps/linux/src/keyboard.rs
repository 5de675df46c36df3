//! The keyboard while a job-control shell waits for its foreground job.
//!
//! A Linux shell that owns the console (`linux busybox sh`) and has put a
//! job in the terminal's foreground ([`crate::groups`]) sleeps in `wait4`
//! while the job runs. If the job does not read the keyboard, nobody
//! would see `^C`. So the waiting shell watches what is typed without
//! taking it (`console_peek`): typing ahead stays for whoever reads next,
//! as in a terminal's input queue, and only a signal key is acted on — the
//! input up to it is taken and dropped (a terminal flushes its queue on a
//! signal key unless `NOFLSH`), `^C` is echoed and the signal goes to the
//! foreground group.

use oxok_libos::abi::layout::{SYSINFO, SysInfo};
use oxok_libos::tty::{self, SIGINT, SIGQUIT, SIGTSTP};
use oxok_libos::{console, exposed};

/// True if this process's standard input is the console: its waits then
/// watch the keyboard ([`wake_on`]) and act on a signal key while a job
/// of its session is in the foreground ([`check`]).
pub fn watching() -> bool {
    crate::calls::file::handle(0).is_ok_and(|h| h.kind() == "console")
}

/// Adds "something was typed, or the terminal's foreground group changed,
/// since now" to a wait's predicate: a job may take the foreground (and a
/// key typed just before become its signal) while the shell sleeps.
pub fn wake_on(b: &mut oxok_pred::Builder) {
    let counter = SYSINFO + core::mem::offset_of!(SysInfo, console_in) as u64;
    let seen = exposed::sysinfo().map_or(0, |i| i.console_in);
    b.or().load_u64(counter).ne_imm(seen);
    if let Some((word, fg)) = crate::groups::foreground_word() {
        b.or().load_u64(word).ne_imm(fg);
    }
}

/// Looks at what was typed for a signal key (this process's terminal
/// settings name them; none without `ISIG`); acts on the first one.
pub fn check() {
    if !crate::groups::job_in_foreground() {
        return;
    }
    let t = tty::get();
    if !t.local(oxok_tty::ISIG) {
        return;
    }
    let mut typed = [0u8; 256];
    let Ok(n) = console::peek(&mut typed) else { return };
    let keys = [(t.cc[oxok_tty::VINTR], SIGINT), (t.cc[oxok_tty::VQUIT], SIGQUIT), (t.cc[oxok_tty::VSUSP], SIGTSTP)];
    let found = typed[..n]
        .iter()
        .enumerate()
        .find_map(|(i, b)| keys.iter().find(|(k, _)| *k != 0 && k == b).map(|&(k, sig)| (i, k, sig)));
    let Some((at, key, sig)) = found else { return };
    // Take (and drop) the input up to and including the key.
    let mut flushed = [0u8; 256];
    if console::try_read(&mut flushed[..=at]).is_err() {
        return;
    }
    if t.local(oxok_tty::ECHO) {
        let _ = console::write(&[b'^', key ^ 0x40, b'\n']);
    }
    crate::groups::divert(sig as u64);
    crate::groups::forward_pending();
}
