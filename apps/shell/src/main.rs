//! shell: the Oxok shell. Reads lines from the console with an editor
//! (history on the arrow keys), parses them (`oxok-shparse`: quotes, `;`
//! `&&` `||`, `|`, `< > >> 2> 2>&1`, `&`, `$VAR`, `$?`), and runs them:
//! programs from the boot archive with arguments (`spawn_with` + `wait` in
//! the libOS), pipelines over libOS pipes, redirections to files of the file
//! server, background jobs, and built-ins — `cd`, `pwd`, and views of the
//! machine read from the kernel's exposed tables (`ps`, `frames`, `slots`,
//! `mem`, `clock`, `caps`). `help` lists everything.
//!
//! Structure: [`run`] walks a parsed line (lists, and-or, expansion),
//! [`pipeline`] starts one pipeline's stages with their descriptors
//! ([`stage`]), [`builtins`] are the commands the shell runs itself,
//! [`jobs`] keeps the background jobs, [`tables`] and [`slots`] are the
//! views.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

mod builtins;
mod complete;
mod functions;
mod jobs;
mod netview;
mod pipeline;
mod run;
mod script;
mod slots;
mod stage;
mod tables;
mod term;
mod top;

use alloc::collections::BTreeMap;
use alloc::string::String;
use oxok_libos::{Args, print, println};
use oxok_shparse::LineEditor;

oxok_libos::main!(main);

/// The shell's state: its variables, the last exit status, the line
/// editor and the background jobs.
pub struct Shell {
    vars: BTreeMap<String, String>,
    status: i32,
    editor: LineEditor,
    jobs: jobs::Jobs,
    /// The keyboard: typed bytes not used yet, foreground jobs' input.
    keyboard: term::Keyboard,
    /// `$!`: the last background job's last program.
    last_background: Option<u64>,
    /// Shell functions and the calls under way.
    functions: functions::Functions,
}

fn main(_args: Args) -> i32 {
    println!("Oxok shell — `help` lists the commands; ^C interrupts a program, ^D ends input, Ctrl-A X quits QEMU.");
    // `kill` run from the prompt is the shell's child, a sibling of its
    // target: the target refuses it, and it asks the shell to forward.
    oxok_libos::signal::accept_forwarding(true);
    let mut sh = Shell {
        vars: BTreeMap::new(),
        status: 0,
        editor: LineEditor::new(),
        jobs: jobs::Jobs::default(),
        keyboard: term::Keyboard::new(),
        last_background: None,
        functions: functions::Functions::default(),
    };
    loop {
        // Background jobs that ended since the last prompt.
        sh.jobs.reap_finished();
        print!("oxok$ ");
        let mut line = match sh.keyboard.read_line(&mut sh.editor) {
            term::Read::Line(line) => line,
            term::Read::Nothing => continue,
            term::Read::Eof => {
                println!();
                return sh.status;
            }
        };
        // An open `if`/`while`/`for` goes on on the next lines.
        while script::needs_more(&line) {
            print!("> ");
            match sh.keyboard.read_line(&mut sh.editor) {
                term::Read::Line(more) => {
                    line.push('\n');
                    line.push_str(&more);
                }
                term::Read::Nothing => break,
                term::Read::Eof => break,
            }
        }
        if let Some(code) = sh.run_line(&line) {
            return code;
        }
    }
}
