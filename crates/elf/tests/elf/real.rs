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

#[test]
fn static_pie_parses_at_a_bias() {
    let dir = scratch("static-pie");
    if let Some(file) = compile(&dir, "gcc", &["-static-pie", "-O1"]) {
        assert_eq!(Elf::parse(&file, LIMIT).unwrap_err(), ElfError::NotExecutable);
        let bias = 0x40_0000_0000;
        let elf = Elf::parse_pie(&file, u64::MAX, bias).expect("static-pie parses with a bias");
        assert!(elf.is_pie() && elf.linux_abi());
        assert!(elf.segments().all(|s| s.vaddr >= bias));
        assert!(elf.entry() >= bias);
        assert!(elf.program_headers_vaddr().is_some_and(|p| p >= bias));
        assert!(elf.tls().is_some_and(|t| t.vaddr >= bias));
        // The same file at bias 0 has the file's own addresses.
        let at0 = Elf::parse_pie(&file, u64::MAX, 0).expect("parses");
        assert_eq!(at0.entry() + bias, elf.entry());
        // A bias that pushes it past the limit is refused.
        assert!(Elf::parse_pie(&file, bias, bias).is_err());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn parse_pie_takes_plain_executables_unbiased() {
    let dir = scratch("exec-unbiased");
    if let Some(file) = compile(&dir, "gcc", &["-static", "-no-pie", "-O1"]) {
        let elf = Elf::parse_pie(&file, LIMIT, 0x40_0000_0000).expect("parses");
        assert!(!elf.is_pie());
        assert_eq!(elf.entry(), Elf::parse(&file, LIMIT).unwrap().entry());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
