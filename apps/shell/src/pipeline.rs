//! Starting one pipeline, `a | b | c`, and waiting for it.
//!
//! 1. One pipe per `|` (`fd::pipe::pipe`: a shared frame with a ring,
//!    Aegis §6 / Xok §5.2 ExOS pipes); stage `i` gets the read end of pipe
//!    `i - 1` as descriptor 0 and the write end of pipe `i` as descriptor 1.
//! 2. Each stage's redirections are applied on top, in order
//!    ([`Stage::redirect`]).
//! 3. Programs are spawned left to right with those descriptors
//!    (`exec::spawn_with`); the shell drops its copies of a stage's ends as
//!    soon as the stage is started, so when the writers of a pipe end, its
//!    reader sees end of file.
//! 4. Built-ins in the pipeline run inside the shell after every program has
//!    started (a reader downstream is then running), with the stage's
//!    descriptors swapped in; they never read their standard input, which is
//!    closed at once (an upstream writer gets a broken pipe).
//! 5. In the foreground the first program's standard input, unless
//!    redirected, is a pipe the shell feeds from the keyboard
//!    ([`crate::term`]), and the shell waits for every stage; the status is
//!    the last stage's. A background pipeline's programs are created held,
//!    announced (`[1] 1027`) and only then started, so the announcement
//!    always comes before anything the job prints; they go to the job list.

use crate::Shell;
use crate::builtins::{self, Step};
use crate::stage::Stage;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use oxok_libos::eprintln;
use oxok_libos::exec::{self, Child, ExitStatus, SpawnError};
use oxok_libos::fd::{Handle, STDIN, STDOUT, pipe};
use oxok_shparse::{Pipeline, Simple};

/// What became of one stage.
pub enum Outcome {
    /// A program, still to be waited for (`name` for messages).
    Running {
        /// argv[0].
        name: String,
        /// The environment.
        child: Child,
    },
    /// Finished — a built-in, or a stage that could not start — with this
    /// status.
    Done(i32),
}

/// A started pipeline.
pub struct Started {
    /// Its stages, left to right.
    pub stages: Vec<Outcome>,
    /// `exit` ran as the pipeline's only command, with this code.
    pub exit: Option<i32>,
    /// The foreground job's keyboard feed (its first program's stdin).
    pub feeder: Option<pipe::Feeder>,
    /// The job reads the console itself (a program that drives the
    /// terminal, see [`TERMINAL_PROGRAMS`]): the shell keeps off the
    /// keyboard until it ends.
    pub terminal: bool,
}

/// Programs that drive the terminal themselves and get the console, not a
/// keyboard feed: the Linux personality, which gives its programs a real
/// tty (`TCGETS`, `poll` on the console, busybox's own line editing).
pub const TERMINAL_PROGRAMS: &[&str] = &["linux"];

impl Shell {
    /// Starts every stage of `p` (see the module documentation). In the
    /// background, the first stage's standard input is closed unless
    /// redirected, so a job never competes with the shell for the keyboard.
    pub fn start(&mut self, p: &Pipeline, background: bool) -> Started {
        let n = p.commands.len();
        let mut stdins: Vec<Option<Handle>> = (0..n).map(|_| None).collect();
        let mut stdouts: Vec<Option<Handle>> = (0..n).map(|_| None).collect();
        for i in 1..n {
            match pipe::pipe() {
                Ok((r, w)) => {
                    stdouts[i - 1] = Some(w);
                    stdins[i] = Some(r);
                }
                Err(e) => {
                    eprintln!("shell: cannot make a pipe: {e}");
                    return Started {
                        stages: (0..n).map(|_| Outcome::Done(1)).collect(),
                        exit: None,
                        feeder: None,
                        terminal: false,
                    };
                }
            }
        }
        // The keyboard, for a foreground job that starts with a program.
        let mut feeder = None;
        let mut terminal = false;
        let first = p.commands.first().and_then(|c| c.argv.first());
        let first_is_program = first.is_some_and(|a| !builtins::is_builtin(a));
        if !background && first_is_program && stdins[0].is_none() {
            if first.is_some_and(|a| TERMINAL_PROGRAMS.contains(&a.as_str())) {
                terminal = true;
            } else {
                match pipe::fed_pipe() {
                    Ok((r, f)) => {
                        stdins[0] = Some(r);
                        feeder = Some(f);
                    }
                    Err(e) => {
                        eprintln!("shell: no keyboard feed for the job ({e}); it reads the console itself");
                        terminal = true;
                    }
                }
            }
        }
        let mut stages = Vec::with_capacity(n);
        let mut builtins: Vec<(usize, Stage)> = Vec::new();
        for (i, cmd) in p.commands.iter().enumerate() {
            let mut stage = Stage::new();
            match stdins[i].take() {
                Some(r) => stage.set(STDIN, Some(r)),
                None if background => stage.set(STDIN, None),
                None => {}
            }
            if let Some(w) = stdouts[i].take() {
                stage.set(STDOUT, Some(w));
            }
            if let Err(why) = stage.redirect(&cmd.redirects) {
                eprintln!("shell: {why}");
                stages.push(Outcome::Done(1));
                continue;
            }
            let Some(name) = cmd.argv.first() else {
                // Only assignments (and redirections, now done).
                if n == 1 {
                    for (k, v) in &cmd.assignments {
                        self.vars.insert(k.clone(), v.clone());
                    }
                }
                stages.push(Outcome::Done(0));
                continue;
            };
            if builtins::is_builtin(name) {
                stage.forget(STDIN);
                builtins.push((i, stage));
                stages.push(Outcome::Done(0));
                continue;
            }
            stages.push(spawn(cmd, &stage, background));
        }
        let mut exit = None;
        for (i, stage) in builtins {
            let argv: Vec<&str> = p.commands[i].argv.iter().map(String::as_str).collect();
            let step = stage.run_installed(|| self.builtin(&argv));
            stages[i] = Outcome::Done(match step {
                Step::Status(s) => s,
                Step::Exit(code) => {
                    if n == 1 && !background {
                        exit = Some(code);
                    }
                    code
                }
            });
        }
        Started { stages, exit, feeder, terminal }
    }
}

/// Spawns the program of `cmd` with the descriptors of `stage`, and the
/// command's `NAME=value` assignments added to its environment; `held`:
/// created, not started (see [`start_held`]).
fn spawn(cmd: &Simple, stage: &Stage, held: bool) -> Outcome {
    let mut argv: Vec<&str> = cmd.argv.iter().map(String::as_str).collect();
    if is_linux_program(argv[0]) {
        argv.insert(0, "linux");
    }
    let mut env: Vec<String> = Vec::new();
    if !cmd.assignments.is_empty() {
        env = oxok_libos::environ::vars();
        for (k, v) in &cmd.assignments {
            let prefix = format!("{k}=");
            env.retain(|e| !e.starts_with(&prefix));
            env.push(format!("{k}={v}"));
        }
    }
    let envp: Vec<&str> = env.iter().map(String::as_str).collect();
    let mut opts = stage.options();
    if !cmd.assignments.is_empty() {
        opts.env(&envp);
    }
    opts.held(held);
    match exec::spawn_with(argv[0], &argv, &opts) {
        Ok(child) => Outcome::Running { name: String::from(argv[0]), child },
        Err(SpawnError::NotFound) => {
            eprintln!("{}: not found (`programs` lists what there is)", argv[0]);
            Outcome::Done(127)
        }
        Err(e) => {
            eprintln!("{}: cannot start: {e}", argv[0]);
            Outcome::Done(126)
        }
    }
}

/// True if `name` runs under the Linux personality, as `linux NAME …`
/// would run it: a boot archive's program made by a Linux toolchain
/// (`Elf::linux_abi`), or a file of the file servers named by a path that
/// starts as an ELF image or a `#!` script (the personality runs those, a
/// script through the interpreter its first line names, and says why when
/// it cannot).
fn is_linux_program(name: &str) -> bool {
    match exec::program(name) {
        Some(image) => oxok_elf::Elf::parse_pie(image, u64::MAX, 0).is_ok_and(|elf| elf.linux_abi()),
        None => name.contains('/') && file_head(name).is_some_and(|h| h.starts_with(b"#!") || h == *b"\x7fELF"),
    }
}

/// The first four bytes of the file `path`, if it has them.
fn file_head(path: &str) -> Option<[u8; 4]> {
    use oxok_libos::fd::File;
    let f = oxok_libos::fs::open_file(path, oxok_libos::fs::OpenFlags::READ).ok()?;
    let mut head = [0u8; 4];
    let n = f.read(&mut head).ok()?;
    (n >= 2).then_some(head)
}

/// Starts the programs of a pipeline spawned held (a background job, once
/// announced).
pub fn start_held(stages: &[Outcome]) {
    for stage in stages {
        if let Outcome::Running { name, child } = stage
            && let Err(e) = child.start()
        {
            eprintln!("{name}: cannot start: {e}");
        }
    }
}

/// Waits for every stage still running; the status of the last stage.
pub fn wait_all(stages: Vec<Outcome>) -> i32 {
    let mut status = 0;
    for stage in stages {
        status = match stage {
            Outcome::Running { name, child } => wait_one(&name, child),
            Outcome::Done(s) => s,
        };
    }
    status
}

/// Waits for `child` (the program `name`); its status, with a line when the
/// kernel killed it.
pub fn wait_one(name: &str, child: Child) -> i32 {
    match exec::wait(child) {
        Ok(ExitStatus::Exited(code)) => code,
        // Ended by a signal (^C, `kill`): 128 + the signal, quietly, as a
        // Unix shell does for the keyboard's signals.
        Ok(signalled @ ExitStatus::Signalled(_)) => signalled.code(),
        Ok(killed @ ExitStatus::Killed(v)) => {
            match v {
                Some(v) => eprintln!("{name}: killed by the kernel (CPU exception {v})"),
                None => eprintln!("{name}: killed"),
            }
            killed.code()
        }
        Err(e) => {
            eprintln!("{name}: wait: {e}");
            1
        }
    }
}
