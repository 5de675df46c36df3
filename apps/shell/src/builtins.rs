//! The commands the shell runs itself: those that change the shell
//! (`cd`, `exit`, `export`, `wait`), and views of the machine read from the
//! kernel's exposed tables. They print with `println!`, which writes to
//! descriptor 1, so a built-in's output follows its redirections and pipes
//! ([`Stage::run_installed`](crate::stage::Stage::run_installed));
//! complaints go to descriptor 2.

use crate::{Shell, slots, tables};
use alloc::string::String;
use oxok_libos::{eprintln, fs, println};

/// Every built-in's name (what `help` describes).
const NAMES: &[&str] = &[
    "exit", "help", "echo", "set", "export", "history", "cd", "pwd", "jobs", "wait", "ps", "envs", "frames", "slots",
    "mem", "clock", "caps", "programs", "net", "xn", "fg", "bg", "source", ".", "top", "return",
];

/// Every built-in's name (for completion).
pub fn names() -> &'static [&'static str] {
    NAMES
}

/// True if `name` is a built-in (it wins over a program of the same name,
/// as `echo` does in every shell).
pub fn is_builtin(name: &str) -> bool {
    NAMES.contains(&name)
}

/// What a built-in asks of the shell.
pub enum Step {
    /// Set `$?` to this.
    Status(i32),
    /// Leave with this code.
    Exit(i32),
}

impl Shell {
    /// Runs built-in `argv[0]` (see [`is_builtin`]).
    pub fn builtin(&mut self, argv: &[&str]) -> Step {
        let args = argv.get(1..).unwrap_or(&[]);
        let status = match argv.first().copied().unwrap_or("") {
            "exit" => {
                return match args.first().map(|c| c.parse::<i32>()) {
                    None => Step::Exit(self.status),
                    Some(Ok(code)) => Step::Exit(code),
                    Some(Err(_)) => {
                        eprintln!("exit: {}: not a number", args[0]);
                        Step::Status(2)
                    }
                };
            }
            "help" => help(),
            "echo" => {
                println!("{}", args.join(" "));
                0
            }
            "set" => {
                for (k, v) in &self.vars {
                    println!("{k}={v}");
                }
                0
            }
            "export" => self.export(args),
            "history" => {
                for (i, line) in self.editor.history().iter().enumerate() {
                    println!("{:>4}  {line}", i + 1);
                }
                0
            }
            "cd" => cd(args),
            "pwd" => {
                println!("{}", fs::cwd());
                0
            }
            "jobs" => self.jobs.show(),
            "top" => crate::top::top(args),
            "return" => self.functions.start_return(args, self.status),
            "wait" => self.jobs.wait_all(),
            "fg" => match self.jobs.take_for_foreground(args.first().copied()) {
                Some((text, stages, feeder)) => self.foreground(text, stages, feeder),
                None => 1,
            },
            "bg" => self.jobs.continue_in_background(args.first().copied()),
            "source" | "." => match self.source(args) {
                Ok(status) => status,
                Err(code) => return Step::Exit(code),
            },
            "ps" | "envs" => view(tables::ps),
            "frames" => view(tables::frames),
            "slots" => view(slots::slots),
            "mem" => view(tables::mem),
            "clock" => view(tables::clock),
            "caps" => view(tables::caps),
            "programs" => programs(args),
            "net" => view(crate::netview::net),
            "xn" => view(crate::xnview::xn),
            other => {
                eprintln!("{other}: not a built-in");
                127
            }
        };
        Step::Status(status)
    }

    /// `source FILE` (or `. FILE`): runs the file's lines as if typed (a
    /// script). `Err(code)` when a line ran `exit`.
    fn source(&mut self, args: &[&str]) -> Result<i32, i32> {
        let [path] = args else {
            eprintln!("usage: source FILE");
            return Ok(2);
        };
        let text = match read_file(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("source: {path}: {e}");
                return Ok(1);
            }
        };
        // A compound command may span lines: gather them until it closes.
        let mut pending = String::new();
        for line in text.lines() {
            if !pending.is_empty() {
                pending.push('\n');
            }
            pending.push_str(line);
            if crate::script::needs_more(&pending) {
                continue;
            }
            if let Some(code) = self.run_line(&core::mem::take(&mut pending)) {
                return Err(code);
            }
        }
        if !pending.is_empty()
            && let Some(code) = self.run_line(&pending)
        {
            return Err(code);
        }
        Ok(self.status)
    }

    /// `export NAME[=value]…`: puts shell variables into the environment
    /// every program started afterwards gets (`export` alone lists it).
    fn export(&mut self, args: &[&str]) -> i32 {
        if args.is_empty() {
            for v in oxok_libos::environ::vars() {
                println!("{v}");
            }
            return 0;
        }
        let mut status = 0;
        for arg in args {
            let (name, value) = match arg.split_once('=') {
                Some((k, v)) => (k, Some(String::from(v))),
                None => (*arg, self.vars.get(*arg).cloned()),
            };
            if name.is_empty() || !name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()) {
                eprintln!("export: {arg}: not a variable name");
                status = 1;
                continue;
            }
            let value = value.unwrap_or_default();
            self.vars.insert(String::from(name), value.clone());
            oxok_libos::environ::set_var(name, &value);
        }
        status
    }
}

/// `cd [DIR]`: changes the current directory (`/` without an argument).
fn cd(args: &[&str]) -> i32 {
    let target = args.first().copied().unwrap_or("/");
    if args.len() > 1 {
        eprintln!("cd: too many arguments");
        return 2;
    }
    match fs::chdir(target) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("cd: {target}: {e}");
            1
        }
    }
}

/// A whole file of the file server, as text (invalid UTF-8 replaced).
fn read_file(path: &str) -> Result<String, oxok_libos::fd::IoError> {
    let f = fs::open(path, fs::OpenFlags::READ)?;
    let mut all = alloc::vec::Vec::new();
    let mut buf = [0u8; 512];
    let result = loop {
        match oxok_libos::fd::read(f, &mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => all.extend_from_slice(&buf[..n]),
            Err(e) => break Err(e),
        }
    };
    let _ = oxok_libos::fd::close(f);
    result.map(|()| String::from_utf8_lossy(&all).into_owned())
}

fn view(f: fn()) -> i32 {
    f();
    0
}

fn help() -> i32 {
    println!("built-in commands:");
    println!("  ps, envs       the environment table: id, parent, name, status, frames, runs, ticks");
    println!("  frames         the frame table, summarised by owner (free, kernel, reserved, each environment)");
    println!("  slots          the slot vector: each slot's owner and last use, and run statistics");
    println!(
        "  net            the network: NIC counters, rings and per-environment packets and drops, the filter table"
    );
    println!("  xn             the disk: XN's free map, roots, per-file-system usage and buffer-cache registry");
    println!("  top [-n N]     live view: CPU share per environment, slot vector; q or ^C quits");
    println!("  mem            usable and free memory");
    println!("  clock          the clock page");
    println!("  caps           this shell's capability list");
    println!("  programs [-a]  the tools in the boot archive, one line each (-a: also the test programs)");
    println!("  cd [DIR]       change directory (/ without DIR);   pwd  print it");
    println!("  echo WORDS     print WORDS;   NAME=value  set a variable;   set  list them");
    println!("  export NAME[=value]   pass a variable to programs (export alone lists them)");
    println!("  jobs           background and stopped jobs;   wait  wait for the running ones");
    println!("  fg [%N]        continue a job in the foreground;   bg [%N]  continue it in the background");
    println!("  source FILE    run the lines of FILE (also: . FILE)");
    println!("  NAME() {{ commands; }}  define a function; NAME args… runs it ($1…, $#, $@; return [N])");
    println!("  if c; then a; elif d; then b; else e; fi   while c; do a; done   until …   for X in w…; do a; done");
    println!("  ^C interrupts the foreground job, ^Z stops it, ^D ends its input");
    println!("  history        lines typed so far (arrow keys recall them)");
    println!("  exit [CODE]    leave the shell");
    println!("  help           this text");
    println!("(all the views read the kernel's exposed tables, without a system call)");
    println!("anything else runs a program from the boot archive: NAME ARGS…  ($? is its status)");
    println!("  a | b | c      pipeline ($? is c's status)      a &   run in the background");
    println!("  < in  > out  >> log  2> err  2>&1             redirections, applied in order");
    println!("  a; b   a && b   a || b   quoting: 'x y' \"x $V\"   X=1 prog  variable for one program");
    0
}

/// The programs meant to be typed, with what each does. Everything else in
/// the boot archive is a test program (scenarios start them by name).
const TOOLS: &[(&str, &str)] = &[
    ("cat", "copy files (or standard input) to standard output"),
    ("clear", "clear the screen"),
    ("cp", "copy a file, or files into a directory"),
    ("date", "the wall-clock time in UTC (+%s: seconds since 1970)"),
    ("echo", "print its arguments (the built-in wins; this one is for pipelines' tests)"),
    ("env", "print the environment variables (export sets them)"),
    ("false", "do nothing, unsuccessfully (status 1)"),
    ("grep", "lines containing a text (fixed strings; -v -c -i)"),
    ("head", "the first lines (-n N)"),
    ("kill", "send a signal to a process or job: kill [-SIG] pid|%job"),
    ("ls", "list a directory of the file server"),
    ("mkdir", "make directories (-p: with parents)"),
    ("mv", "rename files"),
    ("rm", "remove files (-r: directories, -f: no complaint)"),
    ("sleep", "wait a number of seconds (0.5 allowed)"),
    ("sort", "sort lines (-r reversed, -u without repeats)"),
    ("stride", "a user-level stride scheduler over owned time slots (stride N)"),
    ("tail", "the last lines (-n N)"),
    ("test", "check a condition for if/while: -n -z = != -eq -lt … -e -f -d !"),
    ("touch", "create empty files"),
    ("true", "do nothing, successfully (status 0)"),
    ("uniq", "drop adjacent repeated lines (-c counts)"),
    ("wc", "count lines, words and bytes"),
    ("xcp", "copy a tree on the disk, the CPU never touching the data (xcp from to)"),
    ("fsd", "the RAM file server (init starts it)"),
    ("init", "the first program: banner, file server, shell"),
    ("shell", "this shell"),
];

/// `programs`: the tools, one line each; `programs -a`: then the test
/// programs too.
fn programs(args: &[&str]) -> i32 {
    let all = match args {
        [] => false,
        ["-a"] => true,
        _ => {
            eprintln!("usage: programs [-a]");
            return 2;
        }
    };
    let Some(archive) = oxok_libos::exposed::boot_archive() else {
        eprintln!("programs: no boot archive");
        return 1;
    };
    let names: alloc::vec::Vec<&str> =
        oxok_archive::Archive::new(archive).entries().flatten().map(|e| e.name).collect();
    for (name, about) in TOOLS {
        if names.contains(name) {
            println!("  {name:<10} {about}");
        }
    }
    let tests: alloc::vec::Vec<&&str> = names.iter().filter(|n| !TOOLS.iter().any(|(t, _)| t == *n)).collect();
    if all {
        println!("test programs (the scenarios of `cargo xtask test` start them):");
        for name in &tests {
            println!("  {name}");
        }
    } else {
        println!("({} test programs not shown: programs -a)", tests.len());
    }
    0
}
