//! Compound commands (`oxok_shparse::Stmt`): `if`/`elif`/`else`, `while`,
//! `until` and `for NAME in words`. Conditions are statement lists whose
//! last status decides, as in every shell. A loop stops when `^C` is typed
//! between two of its commands or ends one of them, so even a loop of
//! built-ins can be interrupted (status 130); otherwise a loop's status is
//! its body's last.

use crate::Shell;
use alloc::string::String;
use alloc::vec::Vec;
use oxok_shparse::{ErrorKind, Stmt, parse_script};

/// The status of a job ended by `^C` (128 + SIGINT).
const INTERRUPTED: i32 = 128 + oxok_libos::tty::SIGINT;

impl Shell {
    /// Runs `stmts` in order; `Some(code)` when the shell should exit.
    pub fn run_stmts(&mut self, stmts: &[Stmt]) -> Option<i32> {
        for stmt in stmts {
            let exit = match stmt {
                Stmt::Item(item) => self.run_item(item),
                Stmt::If { branches, otherwise } => self.run_if(branches, otherwise),
                Stmt::Loop { until, cond, body } => self.run_loop(*until, cond, body),
                Stmt::Function { name, body } => {
                    self.define_function(name, body);
                    None
                }
                Stmt::For { name, words, body } => {
                    let words = self.functions.splice_args(words);
                    let values: Vec<String> =
                        words.iter().filter_map(|w| w.expand_arg(|n: &str| self.var(n))).collect();
                    self.run_for(name, &values, body)
                }
            };
            if exit.is_some() || self.functions.returning() {
                return exit;
            }
        }
        None
    }

    fn run_if(&mut self, branches: &[(Vec<Stmt>, Vec<Stmt>)], otherwise: &[Stmt]) -> Option<i32> {
        for (cond, body) in branches {
            if let Some(code) = self.run_stmts(cond) {
                return Some(code);
            }
            if self.status == 0 {
                return self.run_stmts(body);
            }
        }
        if otherwise.is_empty() {
            self.status = 0;
            return None;
        }
        self.run_stmts(otherwise)
    }

    fn run_loop(&mut self, until: bool, cond: &[Stmt], body: &[Stmt]) -> Option<i32> {
        let mut last = 0;
        loop {
            if let Some(code) = self.run_stmts(cond) {
                return Some(code);
            }
            if self.functions.returning() || self.stop_loop() {
                return None; // status 130
            }
            if (self.status == 0) == until {
                break;
            }
            if let Some(code) = self.run_stmts(body) {
                return Some(code);
            }
            if self.functions.returning() {
                return None;
            }
            last = self.status;
            if self.stop_loop() {
                return None;
            }
        }
        self.status = last;
        None
    }

    fn run_for(&mut self, name: &str, values: &[String], body: &[Stmt]) -> Option<i32> {
        let mut last = 0;
        for v in values {
            self.vars.insert(String::from(name), v.clone());
            if let Some(code) = self.run_stmts(body) {
                return Some(code);
            }
            if self.functions.returning() {
                return None;
            }
            last = self.status;
            if self.stop_loop() {
                return None; // status 130
            }
        }
        self.status = last;
        None
    }

    /// Whether a loop must stop: its last command was interrupted, or `^C`
    /// was typed since.
    fn stop_loop(&mut self) -> bool {
        if self.status == INTERRUPTED {
            return true;
        }
        if self.keyboard.interrupted() {
            self.status = INTERRUPTED;
            return true;
        }
        false
    }
}

/// Whether `text` is an open compound command that more lines can close.
pub fn needs_more(text: &str) -> bool {
    matches!(parse_script(text), Err(e) if matches!(e.kind, ErrorKind::MissingKeyword(_)))
}
