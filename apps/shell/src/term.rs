//! The shell's side of the terminal: it is the one reader of the keyboard.
//!
//! * At the prompt, bytes go to the line editor (`oxok_shparse`) with the
//!   console in raw mode (`oxok_libos::tty::raw`): the editor does its own
//!   echo, erase, history and `^C`/`^D`.
//! * While a **foreground job** runs, the shell keeps reading: a job whose
//!   standard input would be the keyboard gets a pipe the shell feeds
//!   instead (`fd::pipe::fed_pipe`), and the shell runs the terminal's line
//!   discipline for it (`oxok_tty`, canonical mode with echo, erase, kill,
//!   CR → NL, `^D` = end of input). Lines go into the pipe only when the job
//!   waits for them, so type-ahead the job never reads stays for the next
//!   prompt. A signal key (`^C` → `SIGINT`, `^\` → `SIGQUIT`) typed in the
//!   line being entered goes to every program of the job, whether the job
//!   reads the keyboard (`cat`) or not (`spin`); the shell then waits for
//!   the job to end as usual. `^Z` stops the job: the shell, which created
//!   its programs and holds their capabilities, withdraws their CPU time
//!   (`slot_spare(env, 0)`; a stopped program still takes signals, which
//!   run on the sender's time) and puts the job in the job list, with its
//!   keyboard feed, for `fg` and `bg`. (A program that owns time slots
//!   keeps them: stopping withdraws only spare time.)
//!
//! * A program that drives the terminal itself (`linux`, see
//!   `pipeline::TERMINAL_PROGRAMS`) gets the console: the shell keeps off
//!   the keyboard until it ends (its own signal handling applies).
//!
//! Typed input the shell read but did not use yet waits in [`Keyboard`].

use crate::pipeline::Outcome;
use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;
use oxok_libos::abi::ENV_ZOMBIE;
use oxok_libos::abi::layout::{CLOCK, Clock, ENV_TABLE, ENV_TABLE_ROWS};
use oxok_libos::fd::pipe::Feeder;
use oxok_libos::tty::{self, Termios};
use oxok_libos::{console, exposed, signal, sys};
use oxok_shparse::{Event, LineEditor};
use oxok_tty::{Discipline, Ready};

/// Milliseconds the foreground wait sleeps at most between looks.
const LOOK_MS: u64 = 5;

/// Typed bytes the shell has read and not used yet.
#[derive(Default)]
pub struct Keyboard {
    pending: VecDeque<u8>,
    /// `^C` was typed for a foreground job since [`Keyboard::interrupted`]
    /// last looked (a loop around the job stops too).
    interrupt: bool,
}

/// What the prompt read.
pub enum Read {
    /// A line to run.
    Line(String),
    /// `^C` or a refused line: nothing to run.
    Nothing,
    /// End of input (`^D` on an empty line, or the console is gone).
    Eof,
}

impl Keyboard {
    /// Puts the console in raw mode for the editor.
    pub fn new() -> Keyboard {
        tty::raw();
        Keyboard::default()
    }

    /// Waits for typing and takes it.
    fn fill(&mut self) -> bool {
        let mut buf = [0u8; 64];
        match tty::read(&mut buf) {
            Ok(n) if n > 0 => {
                self.pending.extend(&buf[..n]);
                true
            }
            _ => false,
        }
    }

    /// Takes what was typed, without waiting.
    fn poll(&mut self) {
        let mut buf = [0u8; 64];
        while let Ok(n @ 1..) = console::try_read(&mut buf) {
            self.pending.extend(&buf[..n]);
        }
    }

    /// The next line from the editor.
    pub fn read_line(&mut self, editor: &mut LineEditor) -> Read {
        self.interrupt = false;
        let mut echo: Vec<u8> = Vec::new();
        loop {
            if self.pending.is_empty() && !self.fill() {
                return Read::Eof;
            }
            while let Some(b) = self.pending.pop_front() {
                echo.clear();
                if b == b'\t' {
                    tab(editor);
                    continue;
                }
                let event = editor.feed(b, &mut echo);
                if !echo.is_empty() {
                    let _ = console::write(&echo);
                }
                match event {
                    Some(Event::Line(line)) => return Read::Line(line),
                    Some(Event::Cancel) => return Read::Nothing,
                    Some(Event::TooLong { typed }) => {
                        oxok_libos::eprintln!(
                            "shell: line refused: {typed} bytes, the limit is {}; nothing was run",
                            editor.max_len()
                        );
                        return Read::Nothing;
                    }
                    Some(Event::Eof) => return Read::Eof,
                    None => {}
                }
            }
        }
    }

    /// Whether `^C` was typed (in the line being typed, after what was
    /// read); it is taken and echoed. For loops of built-ins, which no
    /// foreground wait watches.
    pub fn interrupted(&mut self) -> bool {
        if core::mem::take(&mut self.interrupt) {
            return true;
        }
        self.poll();
        let t = Termios::sane();
        let at = self.pending.iter().position(|&b| b == b'\r' || b == b'\n' || b == t.cc[oxok_tty::VEOF]);
        let end = at.unwrap_or(self.pending.len());
        let Some(i) = self.pending.iter().take(end).position(|&b| b == t.cc[oxok_tty::VINTR]) else {
            return false;
        };
        self.pending.drain(..=i);
        let _ = console::write(b"^C\n");
        true
    }

    /// The first signal key in the line being typed (up to the first line
    /// end or `^D`), removed with what was typed before it.
    fn take_signal_key(&mut self, t: &Termios) -> Option<i32> {
        let keys = [
            (t.cc[oxok_tty::VINTR], tty::SIGINT),
            (t.cc[oxok_tty::VQUIT], tty::SIGQUIT),
            (t.cc[oxok_tty::VSUSP], tty::SIGTSTP),
        ];
        for (i, &b) in self.pending.iter().enumerate() {
            if b == b'\r' || b == b'\n' || b == t.cc[oxok_tty::VEOF] {
                return None;
            }
            if let Some(&(_, sig)) = keys.iter().find(|(k, _)| *k != 0 && *k == b) {
                self.pending.drain(..=i);
                return Some(sig);
            }
        }
        None
    }

    /// Waits for the foreground job `stages`, feeding the keyboard to
    /// `feeder` (the job's standard input, if it is the keyboard) and
    /// turning signal keys into signals for the job (module documentation).
    pub fn run_foreground(&mut self, stages: &[Outcome], mut feeder: Option<Feeder>) -> Foreground {
        let t = Termios::sane();
        let mut disc = Box::new(Discipline::new());
        // A signal key's signal, and the programs that have not taken it
        // yet (one that has not started accepting transfers refuses it; it
        // is tried again at every look until the job ends).
        let mut owed: Option<(i32, Vec<u64>)> = None;
        loop {
            let running: Vec<u64> = stages
                .iter()
                .filter_map(|s| match s {
                    Outcome::Running { child, .. } => Some(child.id),
                    Outcome::Done(_) => None,
                })
                .filter(|&id| exposed::env_entry(id).is_some_and(|r| r.status != ENV_ZOMBIE))
                .collect();
            let Some(&first) = running.first() else { return Foreground::Ended };
            if let Some((sig, ids)) = owed.as_mut() {
                ids.retain(|id| running.contains(id) && signal::kill(*id, *sig).is_err());
                if ids.is_empty() {
                    owed = None;
                }
            }
            self.poll();
            if let Some(sig) = self.take_signal_key(&t) {
                let _ = console::write(match sig {
                    tty::SIGINT => b"^C\n",
                    tty::SIGQUIT => b"^\\\n",
                    _ => b"^Z\n",
                });
                disc.clear();
                self.interrupt |= sig == tty::SIGINT;
                if sig == tty::SIGTSTP {
                    set_running(stages, false);
                    return Foreground::Stopped(feeder);
                }
                owed = signal_job(&running, sig);
                continue;
            }
            let fed = match feeder.as_ref().filter(|f| f.wanted()) {
                Some(f) => self.feed(&t, &mut disc, f),
                None => Fed::Nothing,
            };
            match fed {
                Fed::Something => continue,
                Fed::Eof => {
                    // The job's end of input: it sees the pipe close.
                    feeder = None;
                    continue;
                }
                Fed::Signal(tty::SIGTSTP) => {
                    set_running(stages, false);
                    return Foreground::Stopped(feeder);
                }
                Fed::Signal(sig) => {
                    self.interrupt |= sig == tty::SIGINT;
                    owed = signal_job(&running, sig);
                    continue;
                }
                Fed::Nothing => {}
            }
            sleep(first, feeder.as_ref());
        }
    }

    /// Runs the discipline over typed bytes until a line (or the end of
    /// input) is ready for the job, and writes it to `f`.
    fn feed(&mut self, t: &Termios, disc: &mut Discipline, f: &Feeder) -> Fed {
        let mut echo = tty::EchoBuf::default();
        let mut outcome = Fed::Nothing;
        while let Some(b) = self.pending.pop_front() {
            match disc.feed(t, b, &mut echo) {
                None => {}
                Some(Ready::Input) => {
                    echo.flush();
                    let _ = f.write_all(disc.line());
                    disc.consume();
                    outcome = Fed::Something;
                    break;
                }
                Some(Ready::Eof) => {
                    outcome = Fed::Eof;
                    break;
                }
                Some(Ready::Signal(sig)) => {
                    outcome = Fed::Signal(sig);
                    break;
                }
            }
        }
        echo.flush();
        outcome
    }
}

/// How a foreground job left the foreground.
pub enum Foreground {
    /// Every program ended (still to be reaped).
    Ended,
    /// `^Z`: stopped, with its keyboard feed.
    Stopped(Option<Feeder>),
}

/// Stops (`false`) or continues (`true`) every program of a job: whether
/// the kernel lends it spare CPU time (`slot_spare`, allowed to the shell
/// because it holds write on the children it created).
pub fn set_running(stages: &[Outcome], on: bool) {
    for stage in stages {
        if let Outcome::Running { child, .. } = stage {
            let _ = sys::slot_spare(child.slot, u64::from(on));
        }
    }
}

/// Sends `sig` to every program of the foreground job; the programs that
/// did not take it yet, to be tried again.
fn signal_job(running: &[u64], sig: i32) -> Option<(i32, Vec<u64>)> {
    let left: Vec<u64> = running.iter().copied().filter(|&id| signal::kill(id, sig).is_err()).collect();
    (!left.is_empty()).then_some((sig, left))
}

/// Tab at the prompt: completes the word before the cursor, or lists the
/// candidates and shows the line again (`crate::complete`).
fn tab(editor: &mut LineEditor) {
    let mut echo: Vec<u8> = Vec::new();
    match crate::complete::complete(editor.line()) {
        crate::complete::Completion::Insert(text) => {
            for b in text.bytes() {
                let _ = editor.feed(b, &mut echo);
            }
        }
        crate::complete::Completion::List(names) => {
            echo.extend_from_slice(b"\n");
            echo.extend_from_slice(names.join("  ").as_bytes());
            echo.extend_from_slice(b"\noxok$ ");
            editor.redraw(&mut echo);
        }
        crate::complete::Completion::Nothing => echo.push(0x07),
    }
    let _ = console::write(&echo);
}

/// What feeding the job did.
enum Fed {
    /// Nothing was ready.
    Nothing,
    /// A line went to the job.
    Something,
    /// End of input for the job.
    Eof,
    /// A signal key was typed (the discipline echoed it).
    Signal(i32),
}

/// Sleeps until something is typed, the program `watch` ends, the job asks
/// for input, or [`LOOK_MS`] pass.
fn sleep(watch: u64, feeder: Option<&Feeder>) {
    let Some(clock) = exposed::clock() else {
        let _ = sys::yield_cpu(0);
        return;
    };
    let (typed_at, typed) = console::received();
    let row = (watch as usize) & (ENV_TABLE_ROWS - 1);
    let status_at = ENV_TABLE
        + (row * core::mem::size_of::<oxok_libos::abi::EnvEntry>()) as u64
        + core::mem::offset_of!(oxok_libos::abi::EnvEntry, status) as u64;
    let ticks_at = CLOCK + core::mem::offset_of!(Clock, ticks) as u64;
    let mut b = oxok_pred::Builder::new();
    b.load_u64(typed_at).ne_imm(typed);
    b.or().load_u32(status_at).eq_imm(u64::from(ENV_ZOMBIE));
    b.or().load_u64(ticks_at).ge_imm(clock.ticks + oxok_libos::time::ms_to_ticks(LOOK_MS));
    if let Some(f) = feeder {
        let (demand_at, demand) = f.demand_word();
        b.or().load_u64(demand_at).ne_imm(demand);
    }
    let Ok(code) = b.build() else {
        let _ = sys::yield_cpu(0);
        return;
    };
    let bytes = code.as_bytes();
    let pred = oxok_libos::exec::WAIT_PRED;
    if oxok_libos::pred::install(pred, bytes).is_err() || sys::env_sleep(1 << pred).is_err() {
        let _ = sys::yield_cpu(0);
    }
}
