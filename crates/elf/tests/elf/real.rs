//! Real executables built by this machine's toolchain; skipped gracefully
//! when no compiler (or no static C library) is installed.

use crate::builder::LIMIT;
use oxok_elf::{Elf, ElfError};
use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAM: &str = "#include <stdio.h>\n\
    static __thread int counter = 3;\n\
    int main(void) { counter++; printf(\"hello %d\\n\", counter); return 0; }\n";

/// A scratch directory unique to this process and test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oxok-elf-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Compiles `PROGRAM` with `cc` and `args`; `None` (with a note) on failure.
fn compile(dir: &Path, cc: &str, args: &[&str]) -> Option<Vec<u8>> {
    let src = dir.join("hello.c");
    let out = dir.join(format!("hello-{cc}"));
    std::fs::write(&src, PROGRAM).ok()?;
    let status = Command::new(cc).args(args).arg("-o").arg(&out).arg(&src).output();
    match status {
        Ok(o) if o.status.success() => std::fs::read(&out).ok(),
        _ => {
            eprintln!("skipping: `{cc} {}` could not build a test program", args.join(" "));
            None
        }
    }
}

/// Checks a real static executable the way the loader will use it.
fn check_static(file: &[u8]) {
    let elf = Elf::parse(file, LIMIT).expect("real static executable parses");
    assert!(elf.linux_abi(), "a Linux toolchain's output is recognised as such");
    let segs: Vec<_> = elf.segments().collect();
    assert!(!segs.is_empty());
    assert!(segs.iter().any(|s| s.flags.exec));
    assert!(segs.iter().any(|s| s.flags.write && s.mem_size > s.data.len() as u64), "bss");
    let tls = elf.tls().expect("the program uses __thread");
    assert!(tls.data.len() >= 4, "our initialised __thread int");
    assert!(elf.tls_align() >= 4);
    // AT_PHDR must point at a copy of the program header table in memory.
    let phdr = elf.program_headers_vaddr().expect("table is loaded");
    let table_len = usize::from(elf.phnum()) * usize::from(elf.phent());
    let phoff = u64::from_le_bytes(file[32..40].try_into().unwrap()) as usize;
    let holder = segs
        .iter()
        .find(|s| s.vaddr <= phdr && phdr + table_len as u64 <= s.vaddr + s.data.len() as u64)
        .expect("a segment holds the table");
    let at = (phdr - holder.vaddr) as usize;
    assert_eq!(&holder.data[at..at + table_len], &file[phoff..phoff + table_len]);
}

#[test]
fn gcc_static_no_pie() {
    let dir = scratch("gcc");
    if let Some(file) = compile(&dir, "gcc", &["-static", "-no-pie", "-O1"]) {
        check_static(&file);
        // The same binary with a limit below its text is refused.
        assert_eq!(Elf::parse(&file, 0x1000).unwrap_err(), ElfError::SegmentOutOfRange);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn musl_gcc_static() {
    let dir = scratch("musl");
    if let Some(file) = compile(&dir, "musl-gcc", &["-static", "-no-pie", "-O1"]) {
        check_static(&file);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn position_independent_executables_are_refused() {
    let dir = scratch("pie");
    if let Some(file) = compile(&dir, "gcc", &["-fPIE", "-pie"]) {
        assert_eq!(Elf::parse(&file, LIMIT).unwrap_err(), ElfError::NotExecutable);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
