//! A person at the console: a scenario's `typist` types on the guest's
//! serial console (QEMU's stdin) while the machine runs, waits for what
//! the guest prints and times its keys — control keys included — as a
//! person would, where a scenario's `input` is written all at once.

use std::io::Write;
use std::process::ChildStdin;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A typist: types, pauses and waits; `Ok` is a line for the log, `Err`
/// fails the scenario.
pub(crate) type Typing = fn(&mut Typist<'_>) -> Result<String, String>;

/// The keyboard and the screen of a running machine.
pub(crate) struct Typist<'a> {
    keys: &'a mut ChildStdin,
    screen: &'a Mutex<Vec<u8>>,
    /// Screen bytes already waited past.
    read: usize,
}

impl<'a> Typist<'a> {
    pub(crate) fn new(keys: &'a mut ChildStdin, screen: &'a Mutex<Vec<u8>>) -> Typist<'a> {
        Typist { keys, screen, read: 0 }
    }

    /// Types `bytes` (`\x03` is ^C).
    pub(crate) fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.keys.write_all(bytes).and_then(|()| self.keys.flush()).map_err(|e| format!("typing: {e}"))
    }

    /// Waits up to `secs` for `text` on the screen after what earlier waits
    /// found; then the next wait starts after it.
    pub(crate) fn wait_for(&mut self, text: &str, secs: u64) -> Result<(), String> {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            {
                let screen = self.screen.lock().unwrap_or_else(|e| e.into_inner());
                let new = screen.get(self.read..).unwrap_or_default();
                if let Some(at) = new.windows(text.len().max(1)).position(|w| w == text.as_bytes()) {
                    self.read += at + text.len();
                    return Ok(());
                }
            }
            if Instant::now() >= end {
                return Err(format!("{text:?} did not appear within {secs} s"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// A small deterministic generator of pauses (xorshift), so a typist's
/// timing varies from key to key but every run types the same way.
pub(crate) struct Pauses(u64);

impl Pauses {
    pub(crate) fn new(seed: u64) -> Pauses {
        Pauses(seed | 1)
    }

    /// Sleeps between 0 and `max_ms` milliseconds.
    pub(crate) fn pause(&mut self, max_ms: u64) {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        std::thread::sleep(Duration::from_millis(self.0 % (max_ms + 1)));
    }
}

/// ^C at every moment of a shell loop of programs: the loop ends with
/// status 130 each time and the shell answers again. (A signal's default
/// action arriving in a program's exit path while it held the network
/// stack's lock deadlocked the program — and the shell waiting for it —
/// in about 1 of 100 such keys; this catches that only by chance.)
pub(crate) fn interrupt_loops(t: &mut Typist<'_>) -> Result<String, String> {
    const ROUNDS: usize = 40;
    let mut pauses = Pauses::new(0x5eed);
    t.wait_for("oxok$ ", 60)?;
    for round in 0..ROUNDS {
        t.send(b"while true; do echo spinning > /loop-file; done\n")?;
        pauses.pause(300);
        t.send(format!("\x03echo stopped {round} $?\n").as_bytes())?;
        t.wait_for(&format!("stopped {round} 130"), 30).map_err(|e| format!("round {round}: {e}"))?;
    }
    t.send(b"exit 0\n")?;
    Ok(format!("typist: ^C ended {ROUNDS} loops, each at its own moment"))
}
