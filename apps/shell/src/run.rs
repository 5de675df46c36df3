//! Running a parsed line: lists (`;`, `&`), and-or lists (`&&`, `||`),
//! expansion just before each pipeline runs (so `false; echo $?` sees 1),
//! and handing pipelines to [`Shell::start`](crate::Shell::start) — waited
//! for in the foreground, added to the job list in the background.

use crate::Shell;
use crate::functions::Call;
use crate::pipeline;
use alloc::string::String;
use oxok_libos::eprintln;
use oxok_shparse::{Connector, Item, Pipeline, Word, parse_script};

impl Shell {
    /// Runs one line (or several lines of one compound command); `Some(code)`
    /// when the shell should exit.
    pub fn run_line(&mut self, line: &str) -> Option<i32> {
        let script = match parse_script(line) {
            Ok(script) => script,
            Err(e) => {
                let col = e.column(line);
                eprintln!("{:>width$}^", "", width = col + 6);
                eprintln!("{e}");
                self.status = 2;
                return None;
            }
        };
        self.run_stmts(&script)
    }

    /// Runs one and-or list, in the background if it says so.
    pub fn run_item(&mut self, item: &Item<Word>) -> Option<i32> {
        if item.background {
            self.background(item);
            return None;
        }
        for (connector, pipeline) in item.and_or.pipelines() {
            let skip = match connector {
                Some(Connector::And) => self.status != 0,
                Some(Connector::Or) => self.status == 0,
                None => false,
            };
            if skip {
                continue;
            }
            let Some(pipeline) = self.expand(pipeline) else { continue };
            match self.function_call(&pipeline, false) {
                Call::NotAFunction => {}
                Call::Function(body, args) => {
                    if let Some(code) = self.call_function(&body, args) {
                        return Some(code);
                    }
                    continue;
                }
                Call::Refused => {
                    self.status = 2;
                    continue;
                }
            }
            let started = self.start(&pipeline, false);
            if let Some(code) = started.exit {
                return Some(code);
            }
            self.status = if started.terminal {
                pipeline::wait_all(started.stages)
            } else {
                self.foreground(alloc::format!("{pipeline}"), started.stages, started.feeder)
            };
        }
        None
    }

    /// Runs a started job in the foreground until it ends (its status) or
    /// is stopped with `^Z` (it joins the job list; status 148).
    pub fn foreground(
        &mut self,
        text: String,
        stages: alloc::vec::Vec<pipeline::Outcome>,
        feeder: Option<oxok_libos::fd::pipe::Feeder>,
    ) -> i32 {
        match self.keyboard.run_foreground(&stages, feeder) {
            crate::term::Foreground::Ended => pipeline::wait_all(stages),
            crate::term::Foreground::Stopped(feeder) => {
                self.jobs.add_stopped(text, stages, feeder);
                128 + oxok_libos::tty::SIGTSTP
            }
        }
    }

    /// `pipeline &`: started, not waited for; `$?` is 0. An and-or list
    /// would need the shell to wait for its first part, so it is refused.
    fn background(&mut self, item: &Item<Word>) {
        if !item.and_or.rest.is_empty() {
            eprintln!("background and-or lists (a && b &) are not supported: put one pipeline before &");
            self.status = 2;
            return;
        }
        let Some(pipeline) = self.expand(&item.and_or.first) else { return };
        if !matches!(self.function_call(&pipeline, true), Call::NotAFunction) {
            self.status = 2;
            return;
        }
        let started = self.start(&pipeline, true);
        let (_, last) = self.jobs.add(alloc::format!("{pipeline}"), started.stages);
        if let Some(pid) = last {
            self.last_background = Some(pid);
        }
        self.status = 0;
    }

    /// The value of `$name`: `$?` (the last status), `$$` (the shell's
    /// process id), `$!` (the last background job's last program), then
    /// shell variables, then the environment.
    pub fn var(&self, name: &str) -> Option<String> {
        if name == "?" {
            Some(alloc::format!("{}", self.status))
        } else if name == "$" {
            Some(alloc::format!("{}", oxok_libos::proc::pid()))
        } else if name == "!" {
            self.last_background.map(|pid| alloc::format!("{pid}"))
        } else if matches!(name.as_bytes().first(), Some(b'0'..=b'9' | b'#' | b'@' | b'*')) {
            self.functions.positional(name)
        } else {
            self.vars.get(name).cloned().or_else(|| oxok_libos::environ::var(name))
        }
    }

    /// Expands the variables in `p` ([`Shell::var`]) and the job specs
    /// (`%N`) of `kill` ([`crate::jobs::Jobs::job_specs_to_pids`]); `None`
    /// after reporting an error.
    fn expand(&mut self, p: &Pipeline<Word>) -> Option<Pipeline> {
        let mut p = p.clone();
        for command in &mut p.commands {
            command.argv = self.functions.splice_args(&command.argv);
        }
        let lookup = |name: &str| self.var(name);
        match p.expand(lookup) {
            Ok(mut p) => {
                for command in &mut p.commands {
                    if command.argv.first().is_some_and(|a| a == "kill") {
                        let Some(argv) = self.jobs.job_specs_to_pids(core::mem::take(&mut command.argv)) else {
                            self.status = 1;
                            return None;
                        };
                        command.argv = argv;
                    }
                }
                Some(p)
            }
            Err(e) => {
                eprintln!("{e}");
                self.status = 1;
                None
            }
        }
    }
}
