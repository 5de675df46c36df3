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
mod jobs;
mod netview;
mod pipeline;
mod run;
mod slots;
mod stage;
mod tables;

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use oxok_libos::{Args, console, print, println};
use oxok_shparse::{Event, LineEditor};

oxok_libos::main!(main);

/// The shell's state: its variables, the last exit status, the line
/// editor and the background jobs.
pub struct Shell {
    vars: BTreeMap<String, String>,
    status: i32,
    editor: LineEditor,
    jobs: jobs::Jobs,
}

fn main(_args: Args) -> i32 {
    println!("Oxok shell — `help` lists the commands.");
    // `kill` run from the prompt is the shell's child, a sibling of its
    // target: the target refuses it, and it asks the shell to forward.
    oxok_libos::signal::accept_forwarding(true);
    let mut sh = Shell { vars: BTreeMap::new(), status: 0, editor: LineEditor::new(), jobs: jobs::Jobs::default() };
    let mut input = Input::new();
    loop {
        // Background jobs that ended since the last prompt.
        sh.jobs.reap_finished();
        print!("oxok$ ");
        let Some(line) = read_line(&mut sh.editor, &mut input) else {
            println!();
            return sh.status;
        };
        if let Some(code) = sh.run_line(&line) {
            return code;
        }
    }
}

/// Console input not yet fed to the editor (a read may carry several lines).
struct Input {
    buf: [u8; 64],
    start: usize,
    end: usize,
}

impl Input {
    /// Nothing buffered.
    const fn new() -> Input {
        Input { buf: [0; 64], start: 0, end: 0 }
    }
}

/// The next line from the console; `None` at end of input (Ctrl-D).
fn read_line(editor: &mut LineEditor, input: &mut Input) -> Option<String> {
    let mut echo: Vec<u8> = Vec::new();
    loop {
        if input.start == input.end {
            input.end = console::read(&mut input.buf).ok()?;
            input.start = 0;
        }
        while input.start < input.end {
            let b = input.buf[input.start];
            input.start += 1;
            echo.clear();
            let event = editor.feed(b, &mut echo);
            if !echo.is_empty() {
                let _ = console::write(&echo);
            }
            match event {
                Some(Event::Line(line)) => return Some(line),
                Some(Event::Cancel) => return Some(String::new()),
                Some(Event::Eof) => return None,
                None => {}
            }
        }
    }
}
