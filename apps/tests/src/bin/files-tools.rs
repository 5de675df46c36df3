//! files-tools: the tools beside the shell (ls, cat, echo, wc, mkdir, rm,
//! touch, mv), each run as a program with arguments, its standard output
//! (and for cat and wc its standard input) a file of a file server this
//! program starts. Checks what each printed and its exit status; a last
//! `ls -l` prints on the console for the scenario to see.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use oxok_libos::Args;
use oxok_libos::exec::{self, ExitStatus, SpawnOptions};
use oxok_libos::fd::IoError;
use oxok_libos::fs::{self, FileKind, OpenFlags};
use oxok_tests::Checks;

oxok_libos::main!(main);

/// Where each tool's standard output goes.
const OUT: &str = "/tool-out";

/// Runs `argv` with its output in [`OUT`] (and `stdin` as its input, if
/// given): how it ended and what it wrote.
fn run(argv: &[&str], stdin: Option<&str>) -> (Result<ExitStatus, String>, String) {
    let mut opts = SpawnOptions::new();
    match fs::open_handle(OUT, OpenFlags::WRITE | OpenFlags::CREATE | OpenFlags::TRUNCATE) {
        Ok(h) => opts.stdout(h),
        Err(e) => return (Err(alloc::format!("{e}")), String::new()),
    };
    if let Some(path) = stdin {
        match fs::open_handle(path, OpenFlags::READ) {
            Ok(h) => opts.stdin(h),
            Err(e) => return (Err(alloc::format!("{e}")), String::new()),
        };
    }
    let status = exec::spawn_with(argv[0], argv, &opts).map_err(|e| alloc::format!("{e}")).and_then(|c| {
        drop(opts); // our references to its files go before we read them
        exec::wait(c).map_err(|e| alloc::format!("{e}"))
    });
    let out = fs::read_file(OUT).map(|d| String::from_utf8_lossy(&d).into_owned()).unwrap_or_default();
    (status, out)
}

/// Runs `argv` and checks its exit code and output.
fn expect(t: &mut Checks, argv: &[&str], stdin: Option<&str>, code: i32, output: &str) {
    let (status, out) = run(argv, stdin);
    let what = argv.join(" ");
    t.expect(status, Ok(ExitStatus::Exited(code)), &what);
    t.expect(out.as_str(), output, &what);
}

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("files-tools");
    let Some(server) = oxok_tests::fsraw::own_server("files-tools") else { return 1 };
    expect(&mut t, &["mkdir", "/t", "/t/sub"], None, 0, "");
    expect(&mut t, &["mkdir", "/t"], None, 1, "");
    expect(&mut t, &["mkdir", "-p", "/t/a/b/c", "/t/sub"], None, 0, "");
    t.expect(fs::stat("/t/a/b/c").map(|m| m.kind), Ok(FileKind::Dir), "mkdir -p made the parents");
    expect(&mut t, &["echo", "hello", "world"], None, 0, "hello world\n");
    expect(&mut t, &["echo", "-n", "no", "newline"], None, 0, "no newline");
    t.expect(fs::write_file("/t/hello.txt", b"hello world\nsecond line here\n"), Ok(()), "a file for the tools");
    let text = "hello world\nsecond line here\n";
    expect(&mut t, &["cat", "/t/hello.txt"], None, 0, text);
    expect(&mut t, &["cat"], Some("/t/hello.txt"), 0, text);
    expect(&mut t, &["cat", "/t/hello.txt", "-"], Some("/t/hello.txt"), 0, &alloc::format!("{text}{text}"));
    expect(&mut t, &["cat", "/t/nope"], None, 1, "");
    expect(&mut t, &["wc", "/t/hello.txt"], None, 0, "      2       5      29 /t/hello.txt\n");
    expect(&mut t, &["wc"], Some("/t/hello.txt"), 0, "      2       5      29\n");
    expect(&mut t, &["wc", "-l", "/t/hello.txt"], None, 0, "      2 /t/hello.txt\n");
    expect(
        &mut t,
        &["wc", "-c", "/t/hello.txt", "/t/hello.txt"],
        None,
        0,
        "     29 /t/hello.txt\n     29 /t/hello.txt\n     58 total\n",
    );
    expect(&mut t, &["ls", "/t"], None, 0, "a\nhello.txt\nsub\n");
    expect(&mut t, &["ls", "-l", "/t"], None, 0, "d        1 a\n-       29 hello.txt\nd        0 sub\n");
    expect(&mut t, &["ls", "/t/hello.txt"], None, 0, "/t/hello.txt\n");
    expect(&mut t, &["ls", "/t/nope"], None, 1, "");
    expect(&mut t, &["ls", "-z"], None, 2, "");
    expect(&mut t, &["touch", "/t/new"], None, 0, "");
    t.expect(fs::stat("/t/new").map(|m| (m.kind, m.size)), Ok((FileKind::File, 0)), "touch made an empty file");
    expect(&mut t, &["mv", "/t/new", "/t/renamed"], None, 0, "");
    expect(&mut t, &["mv", "/t/renamed", "/t/sub"], None, 0, "");
    t.expect(fs::stat("/t/sub/renamed").map(|m| m.kind), Ok(FileKind::File), "mv into a directory");
    expect(&mut t, &["rm", "/t/sub"], None, 1, "");
    expect(&mut t, &["rm", "/t/nope"], None, 1, "");
    expect(&mut t, &["rm", "-f", "/t/nope"], None, 0, "");
    expect(&mut t, &["rm", "-r", "/t/a", "/t/sub"], None, 0, "");
    t.expect(fs::stat("/t/a").map(|_| ()), Err(IoError::NotFound), "rm -r removed the tree");
    expect(&mut t, &["rm", "/t/hello.txt"], None, 0, "");
    expect(&mut t, &["ls", "/t"], None, 0, "");
    // Once on the console, for the scenario to see.
    t.expect(fs::write_file("/t/shown.txt", b"twelve bytes"), Ok(()), "a file to list");
    let shown = exec::spawn("ls", &["ls", "-l", "/t"]).map(exec::wait);
    t.expect(shown, Ok(Ok(ExitStatus::Exited(0))), "ls -l on the console");
    let _ = fs::unlink(OUT);
    t.expect(fs::stop_server(server), Ok(ExitStatus::Exited(0)), "the server stops");
    t.finish()
}
