//! shell: the first Oxok shell. Reads lines from the console with an
//! editor (history on the arrow keys), parses them (`oxok-shparse`: quotes,
//! `;` `&&` `||`, `$VAR`, `$?`), runs programs from the boot archive with
//! arguments (`spawn` + `wait` in the libOS), and has built-in views of the
//! machine read from the kernel's exposed tables (`ps`, `frames`, `mem`,
//! `clock`, `caps`). Pipelines, redirections and background jobs parse but
//! are refused until the libOS has pipes, files and jobs. `help` lists
//! everything.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

mod run;
mod tables;

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use oxok_libos::{Args, console, print, println};
use oxok_shparse::{Event, LineEditor};

oxok_libos::main!(main);

/// The shell's state: its variables and the last exit status.
pub struct Shell {
    vars: BTreeMap<String, String>,
    status: i32,
    editor: LineEditor,
}

fn main(_args: Args) -> i32 {
    println!("Oxok shell — `help` lists the commands.");
    let mut sh = Shell { vars: BTreeMap::new(), status: 0, editor: LineEditor::new() };
    let mut input = Input::new();
    loop {
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
