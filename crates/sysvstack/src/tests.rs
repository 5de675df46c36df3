//! Reads the image back the way a starting program (or a C runtime's
//! `_start`) does, and checks every bound.

extern crate std;

use super::*;
use std::string::String;
use std::vec;
use std::vec::Vec;

const TOP: u64 = 0x7fff_0000_0000;
const PAGE: u64 = 4096;
const PROGRAM: Program = Program { phdr: Some(0x40_0040), phent: 56, phnum: 4, entry: 0x40_1000 };

/// What a program finds: argv, envp and auxv, read by address from the page.
struct Seen {
    argv: Vec<String>,
    envp: Vec<String>,
    auxv: Vec<(u64, u64)>,
}

fn read(page: &[u8], sp: u64) -> Seen {
    let base = TOP - PAGE;
    let word = |at: u64| u64::from_le_bytes(page[(at - base) as usize..][..8].try_into().unwrap());
    let string = |at: u64| {
        let from = (at - base) as usize;
        let len = page[from..].iter().position(|&b| b == 0).expect("NUL-terminated");
        String::from_utf8(page[from..from + len].to_vec()).unwrap()
    };
    let argc = word(sp);
    let mut at = sp + 8;
    let argv: Vec<String> = (0..argc).map(|i| string(word(at + 8 * i))).collect();
    at += 8 * argc;
    assert_eq!(word(at), 0, "argv ends with NULL");
    at += 8;
    let mut envp = Vec::new();
    while word(at) != 0 {
        envp.push(string(word(at)));
        at += 8;
    }
    at += 8;
    let mut auxv = Vec::new();
    loop {
        let (k, v) = (word(at), word(at + 8));
        auxv.push((k, v));
        at += 16;
        if k == AT_NULL {
            break;
        }
    }
    Seen { argv, envp, auxv }
}

fn build(argv: &[&str], envp: &[&str]) -> (Vec<u8>, u64) {
    let s = InitialStack::new(TOP, PAGE, PROGRAM, argv, envp).expect("fits");
    let mut page = vec![0xaa; PAGE as usize];
    s.write(&mut page).unwrap();
    assert!(page[..s.offset()].iter().all(|&b| b == 0xaa), "nothing below rsp is touched");
    (page, s.sp())
}

#[test]
fn a_program_reads_back_what_was_passed() {
    let (page, sp) = build(&["cat", "-n", "a file"], &["HOME=/", "OXOK_FD0=c"]);
    assert_eq!(sp % 16, 0, "rsp is 16-byte aligned");
    assert!((TOP - PAGE..TOP).contains(&sp));
    let seen = read(&page, sp);
    assert_eq!(seen.argv, ["cat", "-n", "a file"]);
    assert_eq!(seen.envp, ["HOME=/", "OXOK_FD0=c"]);
    assert_eq!(
        seen.auxv,
        [(AT_PHDR, 0x40_0040), (AT_PHENT, 56), (AT_PHNUM, 4), (AT_PAGESZ, PAGE), (AT_ENTRY, 0x40_1000), (AT_NULL, 0)]
    );
}

#[test]
fn strings_sit_at_the_very_top() {
    let (page, _) = build(&["ab"], &["K=v"]);
    assert_eq!(&page[PAGE as usize - 7..], b"ab\0K=v\0");
}

#[test]
fn no_phdr_means_no_at_phdr() {
    let p = Program { phdr: None, ..PROGRAM };
    let argv = ["x"];
    let s = InitialStack::new(TOP, PAGE, p, &argv, &[]).unwrap();
    assert!(s.auxv().iter().all(|&(k, _)| k != AT_PHDR));
    assert_eq!(s.auxv().last(), Some(&(AT_NULL, 0)));
    let mut page = vec![0; PAGE as usize];
    s.write(&mut page).unwrap();
    let seen = read(&page, s.sp());
    assert_eq!(seen.argv, ["x"]);
    assert!(seen.envp.is_empty());
    assert_eq!(seen.auxv.len(), 5);
}

#[test]
fn the_layout_for_no_environment_is_the_boot_loaders() {
    // The kernel's loader has always put one argument "init" at
    // TOP - 5 and the 16-aligned vector block (argc, argv[0], NULL, NULL,
    // six auxv pairs: 16 words) right below it.
    let argv = ["init"];
    let s = InitialStack::new(TOP, PAGE, PROGRAM, &argv, &[]).unwrap();
    assert_eq!(s.sp(), (TOP - 5 - 16 * 8) & !15);
}

#[test]
fn exactly_one_page_fits_and_one_byte_more_does_not() {
    // Find the longest single argument that fits, then add a byte.
    let mut fits = 0;
    for len in (3900..4096).rev() {
        let arg = "a".repeat(len);
        let argv = [arg.as_str()];
        if InitialStack::new(TOP, PAGE, PROGRAM, &argv, &[]).is_ok() {
            fits = len;
            break;
        }
    }
    assert!(fits > 3900);
    let arg = "a".repeat(fits);
    let argv = [arg.as_str()];
    let (page, sp) = build(&argv, &[]);
    assert_eq!(sp, TOP - PAGE, "the image fills the page");
    assert_eq!(read(&page, sp).argv[0].len(), fits);
    let arg = "a".repeat(fits + 16);
    let argv = [arg.as_str()];
    assert_eq!(InitialStack::new(TOP, PAGE, PROGRAM, &argv, &[]).err(), Some(StackError::TooLong));
}

#[test]
fn many_strings_are_refused_not_wrapped() {
    let many = vec!["x"; 10_000];
    assert_eq!(InitialStack::new(TOP, PAGE, PROGRAM, &many, &[]).err(), Some(StackError::TooLong));
    assert_eq!(InitialStack::new(TOP, PAGE, PROGRAM, &[], &many).err(), Some(StackError::TooLong));
    // A top too close to 0 for the vectors.
    let argv = ["x"];
    assert_eq!(InitialStack::new(64, PAGE, PROGRAM, &argv, &[]).err(), Some(StackError::TooLong));
}

#[test]
fn nul_in_a_string_is_refused() {
    let argv = ["a\0b"];
    assert_eq!(InitialStack::new(TOP, PAGE, PROGRAM, &argv, &[]).err(), Some(StackError::Nul));
    let envp = ["K=\0"];
    assert_eq!(InitialStack::new(TOP, PAGE, PROGRAM, &[], &envp).err(), Some(StackError::Nul));
}

#[test]
fn a_page_of_the_wrong_size_is_refused() {
    let argv = ["x"];
    let s = InitialStack::new(TOP, PAGE, PROGRAM, &argv, &[]).unwrap();
    assert_eq!(s.write(&mut [0; 100]), Err(StackError::BadPage));
}

#[test]
fn byte_strings_and_owned_strings_lay_out_alike() {
    let owned = [String::from("sh"), String::from("-c")];
    let borrowed = ["sh", "-c"];
    let a = InitialStack::new(TOP, PAGE, PROGRAM, &owned, &[]).unwrap();
    let b = InitialStack::new(TOP, PAGE, PROGRAM, &borrowed, &[]).unwrap();
    assert_eq!(a.sp(), b.sp());
    let (mut pa, mut pb) = (vec![0; PAGE as usize], vec![0; PAGE as usize]);
    a.write(&mut pa).unwrap();
    b.write(&mut pb).unwrap();
    assert_eq!(pa, pb);
}
