//! files: the file server and the libOS file client, end to end. Starts its
//! own `fsd` (which it and its children find as the `fsd` it started), then: create, write,
//! read back, seek, append, truncate, stat, rename, unlink (also of an open
//! file), mkdir, nested directories, readdir with long names, long paths
//! (staged in chunks), the current directory, lexical path normalisation,
//! and the errors (NotFound,
//! NotDir, IsDir, NotEmpty, Exists, BadFd); then two processes on one file
//! (a child reads what the parent wrote, by path, and answers in another
//! file), and an open file inherited by a child (`file:` spec) whose
//! position parent and child share. Finally every handle is back and the
//! server stops.
//!
//! `files child-read PATH TEXT` and `files child-inherit FD` are the
//! children's parts.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;
use oxok_libos::exec::{self, ExitStatus, SpawnOptions};
use oxok_libos::fd::{self, IoError, SeekFrom};
use oxok_libos::fs::{self, FileKind, OpenFlags};
use oxok_libos::{Args, println};
use oxok_tests::Checks;

oxok_libos::main!(main);

const RD: OpenFlags = OpenFlags::READ;

fn main(args: Args) -> i32 {
    match (args.get(1), args.get(2), args.get(3)) {
        (Some("child-read"), Some(path), Some(text)) => child_read(path, text),
        (Some("child-inherit"), Some(n), _) => child_inherit(n),
        _ => parent(),
    }
}

/// Lexical normalisation: paths already normal come back as they are;
/// empty components, `.` and `..` (the root its own parent) are resolved.
fn paths(t: &mut Checks) {
    let cases = [
        ("/", "/"),
        ("/a/b", "/a/b"),
        ("/...", "/..."),
        ("/a/.b/c..", "/a/.b/c.."),
        ("//", "/"),
        ("/a//b/", "/a/b"),
        ("/a/./b/.", "/a/b"),
        ("/a/../b", "/b"),
        ("/a/b/..", "/a"),
        ("/../..", "/"),
        ("/..a/..", "/"),
        ("/.", "/"),
    ];
    for (path, want) in cases {
        t.expect(fs::normalize(path).as_str(), want, &alloc::format!("normalize({path:?})"));
    }
}

fn parent() -> i32 {
    let mut t = Checks::new("files");
    let Some(server) = oxok_tests::fsraw::own_server("files") else { return 1 };
    let base = fs::server_stats();
    t.check(base.is_ok_and(|s| s.handles == 0 && s.inodes == 1), "a fresh server: no handles, only the root");
    files_and_seek(&mut t);
    dirs_and_names(&mut t);
    errors(&mut t);
    cwd(&mut t);
    paths(&mut t);
    println!("files: the API works through the server");
    shared(&mut t);
    inherited(&mut t);
    let end = fs::server_stats();
    t.expect(end.map(|s| (s.clients, s.handles, s.open_files)), Ok((0, 0, 0)), "every handle closed at the end");
    t.expect(fs::stop_server(server), Ok(ExitStatus::Exited(0)), "the server stops when its creator asks");
    t.finish()
}

/// Reads `fd` from its position to the end.
fn read_rest(fd: usize) -> Result<Vec<u8>, IoError> {
    let mut out = Vec::new();
    let mut buf = [0u8; 100];
    loop {
        match fd::read(fd, &mut buf)? {
            0 => return Ok(out),
            n => out.extend_from_slice(&buf[..n]),
        }
    }
}

fn files_and_seek(t: &mut Checks) {
    t.expect(fs::mkdir("/docs"), Ok(()), "mkdir /docs");
    let Ok(f) = fs::open("/docs/a.txt", OpenFlags::WRITE | OpenFlags::CREATE) else {
        t.check(false, "create /docs/a.txt");
        return;
    };
    t.expect(fd::write_all(f, b"hello world"), Ok(()), "write");
    t.expect(fd::read(f, &mut [0; 4]), Err(IoError::BadFd), "read on a write-only file refused");
    t.expect(fd::close(f), Ok(()), "close");
    let meta = fs::stat("/docs/a.txt");
    t.expect(meta.map(|m| (m.kind, m.size)), Ok((FileKind::File, 11)), "stat: a file of 11 bytes");
    t.expect(fs::read_file("/docs/a.txt").as_deref(), Ok(&b"hello world"[..]), "read back");

    let Ok(f) = fs::open("/docs/a.txt", OpenFlags::READ | OpenFlags::WRITE) else {
        t.check(false, "open read-write");
        return;
    };
    t.expect(fd::seek(f, SeekFrom::Start(6)), Ok(6), "seek from the start");
    let mut five = [0u8; 5];
    t.expect(fd::read(f, &mut five), Ok(5), "read 5 after seek");
    t.check(&five == b"world", "read from the sought position");
    t.expect(fd::seek(f, SeekFrom::End(-5)), Ok(6), "seek from the end");
    t.expect(fd::seek(f, SeekFrom::Current(-6)), Ok(0), "seek from the position");
    t.expect(fd::seek(f, SeekFrom::Current(-1)), Err(IoError::Invalid), "seek before the start refused");
    t.expect(fd::write_all(f, b"HELLO"), Ok(()), "overwrite");
    t.expect(fd::seek(f, SeekFrom::Start(20)), Ok(20), "seek past the end");
    t.expect(fd::write_all(f, b"!"), Ok(()), "write past the end");
    t.expect(
        fs::read_file("/docs/a.txt").as_deref(),
        Ok(&b"HELLO world\0\0\0\0\0\0\0\0\0!"[..]),
        "a hole reads as zeros",
    );
    t.expect(fd::close(f), Ok(()), "close");

    // Many messages' worth: 10 000 bytes in chunks, read back exactly.
    let big: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
    t.expect(fs::write_file("/big", &big), Ok(()), "write 10000 bytes");
    t.expect(fs::stat("/big").map(|m| m.size), Ok(10_000), "size 10000");
    t.check(fs::read_file("/big").is_ok_and(|d| d == big), "10000 bytes read back exactly");
    // Whole files of several shared buffers' worth, one of them an exact
    // multiple (the read after the last full one finds the end).
    for len in [200_000usize, 2 * 65_536] {
        let big: Vec<u8> = (0..len as u32).map(|i| (i * 13 % 253) as u8).collect();
        t.expect(fs::write_file("/big", &big), Ok(()), "write a large file");
        t.check(fs::read_file("/big").is_ok_and(|d| d == big), "a large file read back whole");
    }

    // Append always writes at the end; truncate empties; exclusive refuses.
    if let Ok(f) = fs::open("/docs/a.txt", OpenFlags::APPEND) {
        let _ = fd::seek(f, SeekFrom::Start(0));
        t.expect(fd::write_all(f, b"+"), Ok(()), "append");
        let _ = fd::close(f);
    }
    t.expect(fs::stat("/docs/a.txt").map(|m| m.size), Ok(22), "append wrote at the end");
    let excl = fs::open("/docs/a.txt", OpenFlags::WRITE | OpenFlags::CREATE | OpenFlags::EXCLUSIVE);
    t.expect(excl, Err(IoError::Exists), "exclusive create of an existing name");
    if let Ok(f) = fs::open("/docs/a.txt", OpenFlags::WRITE | OpenFlags::TRUNCATE) {
        t.expect(fd::close(f), Ok(()), "truncating open");
    }
    t.expect(fs::stat("/docs/a.txt").map(|m| m.size), Ok(0), "truncate empties the file");

    // Unlinked while open: still readable, gone with its last handle.
    let inodes = fs::server_stats().map(|s| s.inodes);
    t.expect(fs::write_file("/gone", b"still here"), Ok(()), "write /gone");
    let held = fs::open("/gone", RD);
    t.expect(fs::unlink("/gone"), Ok(()), "unlink an open file");
    t.expect(fs::stat("/gone").map(|_| ()), Err(IoError::NotFound), "the name is gone");
    if let Ok(f) = held {
        t.expect(read_rest(f).as_deref(), Ok(&b"still here"[..]), "an unlinked open file stays readable");
        let _ = fd::close(f);
    }
    t.expect(fs::server_stats().map(|s| s.inodes), inodes, "its inode is freed with the last handle");
    t.expect(fs::unlink("/big"), Ok(()), "unlink /big");
}

fn dirs_and_names(t: &mut Checks) {
    t.expect(fs::rename("/docs/a.txt", "/docs/b.txt"), Ok(()), "rename");
    t.expect(fs::stat("/docs/a.txt").map(|_| ()), Err(IoError::NotFound), "the old name is gone");
    t.expect(fs::stat("/docs/b.txt").map(|m| m.kind), Ok(FileKind::File), "the new name is there");
    for d in ["/docs/x", "/docs/x/y", "/docs/x/y/z"] {
        t.expect(fs::mkdir(d), Ok(()), "mkdir nested");
    }
    t.expect(fs::write_file("/docs/x/y/z/deep", b"deep"), Ok(()), "a file four levels down");
    t.expect(fs::read_file("/docs/x/./y/../y/z/deep").as_deref(), Ok(&b"deep"[..]), "path with . and ..");
    let names = |path: &str| fs::read_dir(path).map(|v| v.into_iter().map(|e| (e.name, e.kind)).collect::<Vec<_>>());
    t.expect(
        names("/docs"),
        Ok(alloc::vec![(String::from("b.txt"), FileKind::File), (String::from("x"), FileKind::Dir)]),
        "readdir: sorted, with kinds",
    );
    t.expect(fs::stat("/docs").map(|m| (m.kind, m.size)), Ok((FileKind::Dir, 2)), "a directory's size is its entries");
    // A 200-byte name needs several readdir messages; a 1000-byte path
    // several staged chunks.
    let long: String = (0..200).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    let mut deep = String::from("/docs");
    for i in 0..8 {
        deep.push('/');
        deep.push_str(&long[..100]);
        deep.push((b'0' + i) as char);
        t.expect(fs::mkdir(&deep), Ok(()), "mkdir with a 101-byte name");
    }
    let file = fs::join(&deep, &long);
    t.check(file.len() > 1000, "a path over 1000 bytes");
    t.expect(fs::write_file(&file, b"far"), Ok(()), "create at a long path");
    t.expect(fs::read_file(&file).as_deref(), Ok(&b"far"[..]), "read at a long path");
    t.expect(names(&deep), Ok(alloc::vec![(long.clone(), FileKind::File)]), "readdir gives a 200-byte name whole");
    let moved = fs::join(&deep, "short");
    t.expect(fs::rename(&file, &moved), Ok(()), "rename with two long paths");
    t.expect(fs::read_file(&moved).as_deref(), Ok(&b"far"[..]), "renamed at a long path");
    t.expect(fs::rename("/docs/x", "/docs/x/y/inside"), Err(IoError::Invalid), "a directory into itself refused");
}

fn errors(t: &mut Checks) {
    t.expect(fs::open("/nope", RD), Err(IoError::NotFound), "open a missing file: NotFound");
    t.expect(fs::open("/docs/b.txt/x", RD), Err(IoError::NotDir), "a file as a directory: NotDir");
    t.expect(fs::open("/docs", OpenFlags::WRITE), Err(IoError::IsDir), "a directory for writing: IsDir");
    t.expect(fs::rmdir("/docs"), Err(IoError::NotEmpty), "rmdir of a full directory: NotEmpty");
    t.expect(fs::unlink("/docs/x"), Err(IoError::IsDir), "unlink of a directory: IsDir");
    t.expect(fs::rmdir("/docs/b.txt"), Err(IoError::NotDir), "rmdir of a file: NotDir");
    t.expect(fs::mkdir("/nope/a"), Err(IoError::NotFound), "mkdir in a missing directory: NotFound");
    t.expect(fs::mkdir("/docs"), Err(IoError::Exists), "mkdir of an existing name: Exists");
    t.expect(fs::read_dir("/docs/b.txt").map(|_| ()), Err(IoError::NotDir), "readdir of a file: NotDir");
    t.expect(fs::stat(""), Err(IoError::NotFound), "the empty path: NotFound");
    t.expect(fs::stat("/a\0b"), Err(IoError::Invalid), "a NUL in a path: Invalid");
    if let Ok(f) = fs::open("/docs", RD) {
        t.expect(fd::read(f, &mut [0; 8]), Err(IoError::IsDir), "read of a directory: IsDir");
        let _ = fd::close(f);
    }
    if let Ok(f) = fs::open("/docs/b.txt", RD) {
        t.expect(fd::write(f, b"x"), Err(IoError::BadFd), "write on a read-only file: BadFd");
        let _ = fd::close(f);
    }
}

fn cwd(t: &mut Checks) {
    t.expect(fs::cwd(), String::from("/"), "the current directory starts at /");
    t.expect(fs::chdir("/docs/x"), Ok(()), "chdir");
    t.expect(fs::cwd(), String::from("/docs/x"), "cwd follows");
    t.expect(fs::read_file("y/z/deep").as_deref(), Ok(&b"deep"[..]), "relative path");
    t.expect(fs::chdir("../x/./y/.."), Ok(()), "chdir with . and ..");
    t.expect(fs::cwd(), String::from("/docs/x"), "cwd normalised");
    t.expect(fs::chdir("../b.txt"), Err(IoError::NotDir), "chdir to a file: NotDir");
    t.expect(fs::chdir("nope"), Err(IoError::NotFound), "chdir to nothing: NotFound");
    t.expect(fs::chdir(".."), Ok(()), "chdir ..");
    t.expect(fs::stat("b.txt").map(|m| m.kind), Ok(FileKind::File), "relative to the new cwd");
    t.expect(fs::chdir("/"), Ok(()), "chdir /");
}

/// Two processes, one file: the child reads by path what the parent wrote
/// and answers in a file of its own, which the parent reads.
fn shared(t: &mut Checks) {
    t.expect(fs::write_file("/shared.txt", b"from the parent"), Ok(()), "write /shared.txt");
    let status = exec::spawn("files", &["files", "child-read", "/shared.txt", "from the parent"]).map(exec::wait);
    t.expect(status, Ok(Ok(ExitStatus::Exited(0))), "the child read the parent's file");
    t.expect(fs::read_file("/reply.txt").as_deref(), Ok(&b"child saw it"[..]), "the parent reads the child's file");
    println!("files: two processes shared a file");
}

fn child_read(path: &str, text: &str) -> i32 {
    let ok = fs::read_file(path).is_ok_and(|d| d == text.as_bytes());
    let answered = fs::write_file("/reply.txt", if ok { b"child saw it" } else { b"child saw other" }).is_ok();
    if ok && answered { 0 } else { 1 }
}

/// A child inherits an open file as its descriptor 5: parent and child
/// share one position, so the child's write lands after the parent's, and
/// the parent's next write after the child's.
fn inherited(t: &mut Checks) {
    let Ok(f) = fs::open("/inherit.txt", OpenFlags::READ | OpenFlags::WRITE | OpenFlags::CREATE) else {
        t.check(false, "create /inherit.txt");
        return;
    };
    t.expect(fd::write_all(f, b"parent:"), Ok(()), "the parent writes first");
    let mut opts = SpawnOptions::new();
    if let Ok(h) = fd::get(f) {
        opts.fd(5, h);
    }
    let status = exec::spawn_with("files", &["files", "child-inherit", "5"], &opts).map(exec::wait);
    drop(opts);
    t.expect(status, Ok(Ok(ExitStatus::Exited(0))), "the child used the inherited file");
    t.expect(fd::write_all(f, b"!"), Ok(()), "the parent writes after the child");
    t.expect(fd::close(f), Ok(()), "close");
    t.expect(fs::read_file("/inherit.txt").as_deref(), Ok(&b"parent:child!"[..]), "one position, shared");
    println!("files: a child inherited an open file");
}

fn child_inherit(n: &str) -> i32 {
    let Ok(n) = n.parse::<usize>() else { return 2 };
    let kind = fd::get(n).map(|h| h.kind());
    let at = fd::seek(n, SeekFrom::Current(0));
    let wrote = fd::write_all(n, b"child");
    if kind == Ok("file") && at == Ok(7) && wrote.is_ok() { 0 } else { 1 }
}
