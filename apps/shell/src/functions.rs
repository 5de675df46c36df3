//! Shell functions: `NAME() { commands; }` defines one; `NAME args…` runs
//! its body in the shell itself, with the arguments as `$1`…`$9`, `$#`,
//! `$@` and `$*` (restored when it returns), ended early by `return [N]`.
//! `$@` standing alone as a word (quoted or not) becomes one word per
//! argument, as in every shell; everywhere else a variable is one word
//! (no field splitting).
//! A function runs as a whole command — not as a stage of a pipeline, in
//! the background or with redirections, which would need the shell to run
//! in a second environment. Calls nest at most [`MAX_CALLS`] deep, so a
//! runaway recursion is an error, not a stack overflow.

use crate::Shell;
use alloc::collections::BTreeMap;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use oxok_libos::eprintln;
use oxok_shparse::{Part, Pipeline, Stmt, Word};

/// How deep function calls may nest.
pub const MAX_CALLS: usize = 32;

/// The defined functions and the calls under way.
#[derive(Default)]
pub struct Functions {
    defined: BTreeMap<String, Rc<Vec<Stmt>>>,
    /// The arguments of each call under way, innermost last.
    args: Vec<Vec<String>>,
    /// Set by `return` until the innermost call ends.
    returning: bool,
}

impl Functions {
    /// Whether `name` is a defined function.
    pub fn is_function(&self, name: &str) -> bool {
        self.defined.contains_key(name)
    }

    /// `$1`…, `$#`, `$@`, `$*` of the innermost call (`None` outside one,
    /// or past the last argument).
    pub fn positional(&self, name: &str) -> Option<String> {
        let args = self.args.last()?;
        match name {
            "#" => Some(alloc::format!("{}", args.len())),
            "@" | "*" => Some(args.join(" ")),
            _ => name.parse::<usize>().ok().filter(|&n| n > 0).and_then(|n| args.get(n - 1).cloned()),
        }
    }

    /// `words` with each word that is `$@` alone replaced by the innermost
    /// call's arguments, one word each (unchanged outside a call).
    pub fn splice_args(&self, words: &[Word]) -> Vec<Word> {
        let Some(args) = self.args.last() else { return words.to_vec() };
        let mut out = Vec::with_capacity(words.len() + args.len());
        for w in words {
            if matches!(w.parts.as_slice(), [Part::Var { name, .. }] if name == "@") {
                out.extend(args.iter().map(|a| Word {
                    parts: alloc::vec![Part::Lit { text: a.clone(), quoted: true }],
                    quoted: true,
                    span: w.span,
                }));
            } else {
                out.push(w.clone());
            }
        }
        out
    }

    /// True while a `return` is unwinding the innermost call: statement
    /// lists and loops stop.
    pub fn returning(&self) -> bool {
        self.returning
    }

    /// `return [N]`: the status to leave the innermost call with, or an
    /// error outside a call.
    pub fn start_return(&mut self, args: &[&str], status: i32) -> i32 {
        if self.args.is_empty() {
            eprintln!("return: not inside a function");
            return 2;
        }
        let code = match args.first().map(|a| a.parse::<i32>()) {
            None => status,
            Some(Ok(n)) => n,
            Some(Err(_)) => {
                eprintln!("return: {}: not a number", args[0]);
                2
            }
        };
        self.returning = true;
        code
    }
}

/// What a pipeline is for the function table.
pub enum Call {
    /// It names no function: run it as programs and built-ins.
    NotAFunction,
    /// A call of a function body with these arguments.
    Function(Rc<Vec<Stmt>>, Vec<String>),
    /// A function where one cannot run (reported).
    Refused,
}

impl Shell {
    /// `NAME() { … }`: defines or replaces `name`.
    pub fn define_function(&mut self, name: &str, body: &[Stmt]) {
        self.functions.defined.insert(String::from(name), Rc::new(body.to_vec()));
        self.status = 0;
    }

    /// Whether `p` calls a function (see the module documentation).
    pub fn function_call(&self, p: &Pipeline, background: bool) -> Call {
        let named = |i: usize| p.commands[i].argv.first().filter(|a| self.functions.is_function(a));
        let Some(at) = (0..p.commands.len()).find(|&i| named(i).is_some()) else { return Call::NotAFunction };
        let cmd = &p.commands[at];
        let name = named(at).map_or("", String::as_str);
        if p.commands.len() > 1 || background || !cmd.redirects.is_empty() || !cmd.assignments.is_empty() {
            eprintln!("{name}: a function runs only as a whole command (no pipeline, &, redirection or VAR=value)");
            return Call::Refused;
        }
        match self.functions.defined.get(name) {
            Some(body) => Call::Function(body.clone(), cmd.argv[1..].to_vec()),
            None => Call::NotAFunction,
        }
    }

    /// Runs a function body with `args`; `Some(code)` when the shell
    /// should exit.
    pub fn call_function(&mut self, body: &[Stmt], args: Vec<String>) -> Option<i32> {
        if self.functions.args.len() >= MAX_CALLS {
            eprintln!("shell: functions nested more than {MAX_CALLS} deep");
            self.status = 2;
            return None;
        }
        self.functions.args.push(args);
        self.status = 0;
        let exit = self.run_stmts(body);
        self.functions.args.pop();
        self.functions.returning = false;
        exit
    }
}
