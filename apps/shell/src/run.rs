//! Running a parsed line: lists, `&&`/`||`, assignments, built-ins and
//! programs.

use crate::{Shell, tables};
use alloc::string::String;
use alloc::vec::Vec;
use oxok_libos::exec::{self, ExitStatus, SpawnError};
use oxok_libos::println;
use oxok_shparse::{Connector, Simple, parse};

impl Shell {
    /// Runs one line; `Some(code)` when the shell should exit.
    pub fn run_line(&mut self, line: &str) -> Option<i32> {
        let cmd = match parse(line) {
            Ok(cmd) => cmd,
            Err(e) => {
                let col = e.column(line);
                println!("{:>width$}^", "", width = col + 6);
                println!("syntax error: {e}");
                self.status = 2;
                return None;
            }
        };
        for item in &cmd.items {
            if item.background {
                println!("background jobs (&) are not supported yet");
                self.status = 2;
                continue;
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
                // Expand just before running, so `$?` sees the last status.
                let status = self.status;
                let vars = &self.vars;
                let lookup = |name: &str| -> Option<String> {
                    if name == "?" { Some(alloc::format!("{status}")) } else { vars.get(name).cloned() }
                };
                let pipeline = match pipeline.expand(lookup) {
                    Ok(p) => p,
                    Err(e) => {
                        println!("{e}");
                        self.status = 1;
                        continue;
                    }
                };
                if pipeline.commands.len() > 1 {
                    println!("pipelines (|) need pipes, which the libOS does not have yet");
                    self.status = 2;
                    continue;
                }
                let Some(simple) = pipeline.commands.first() else { continue };
                match self.simple(simple) {
                    Step::Exit(code) => return Some(code),
                    Step::Status(s) => self.status = s,
                }
            }
        }
        None
    }

    fn simple(&mut self, s: &Simple) -> Step {
        if !s.redirects.is_empty() {
            println!("redirections (< > >>) need files, which the libOS does not have yet");
            return Step::Status(2);
        }
        if s.argv.is_empty() {
            for (name, value) in &s.assignments {
                self.vars.insert(name.clone(), value.clone());
            }
            return Step::Status(0);
        }
        if !s.assignments.is_empty() {
            println!("NAME=value before a command needs environment variables, which spawn does not pass yet");
            return Step::Status(2);
        }
        let argv: Vec<&str> = s.argv.iter().map(String::as_str).collect();
        let status = match argv[0] {
            "exit" => return Step::Exit(argv.get(1).and_then(|c| c.parse().ok()).unwrap_or(self.status)),
            "help" => help(),
            "echo" => {
                println!("{}", argv[1..].join(" "));
                0
            }
            "set" => {
                for (k, v) in &self.vars {
                    println!("{k}={v}");
                }
                0
            }
            "history" => {
                for (i, line) in self.editor.history().iter().enumerate() {
                    println!("{:>4}  {line}", i + 1);
                }
                0
            }
            "ps" | "envs" => builtin(tables::ps),
            "frames" => builtin(tables::frames),
            "mem" => builtin(tables::mem),
            "clock" => builtin(tables::clock),
            "caps" => builtin(tables::caps),
            "programs" => programs(),
            _ => program(&argv),
        };
        Step::Status(status)
    }
}

/// What a simple command asks of the shell.
enum Step {
    Status(i32),
    Exit(i32),
}

fn builtin(f: fn()) -> i32 {
    f();
    0
}

fn help() -> i32 {
    println!("built-in commands:");
    println!("  ps, envs     the environment table (exposed by the kernel, read without a system call)");
    println!("  frames       the frame table, summarised by owner");
    println!("  mem          usable and free memory");
    println!("  clock        the clock page");
    println!("  caps         this shell's capability list");
    println!("  programs     the programs in the boot archive");
    println!("  echo WORDS   print WORDS;   NAME=value  set a variable;   set  list them");
    println!("  history      lines typed so far (arrow keys recall them)");
    println!("  exit [CODE]  leave the shell");
    println!("anything else runs a program from the boot archive: NAME ARGS…  ($? is its status)");
    println!("lists: a; b   a && b   a || b   quoting: 'x y' \"x $V\"");
    0
}

fn programs() -> i32 {
    let Some(archive) = oxok_libos::exposed::boot_archive() else {
        println!("programs: no boot archive");
        return 1;
    };
    for entry in oxok_archive::Archive::new(archive).entries().flatten() {
        println!("  {:<24} {:>8} bytes", entry.name, entry.data.len());
    }
    0
}

fn program(argv: &[&str]) -> i32 {
    let child = match exec::spawn(argv[0], argv) {
        Ok(child) => child,
        Err(SpawnError::NotFound) => {
            println!("{}: not found (`programs` lists what there is)", argv[0]);
            return 127;
        }
        Err(e) => {
            println!("{}: {e}", argv[0]);
            return 126;
        }
    };
    match exec::wait(child) {
        Ok(ExitStatus::Exited(code)) => code,
        Ok(killed @ ExitStatus::Killed(v)) => {
            match v {
                Some(v) => println!("{}: killed by the kernel (CPU exception {v})", argv[0]),
                None => println!("{}: killed", argv[0]),
            }
            killed.code()
        }
        Err(e) => {
            println!("{}: wait: {e}", argv[0]);
            1
        }
    }
}
