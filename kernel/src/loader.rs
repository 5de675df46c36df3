//! Starts a program from the boot archive in a fresh environment: ELF
//! segments into newly allocated frames, a stack, and a System V initial
//! stack (argc, argv, envp, auxv) that both native Oxok programs and static
//! Linux programs understand.

use crate::arch::trapframe::TrapFrame;
use crate::env::{self, EnvId, EnvTable};
use crate::mem::access::FrameRef;
use crate::mem::{PAGE_SIZE, align_down, align_up};
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use oxok_abi::Error;
use oxok_abi::layout::{STACK_SIZE, STACK_TOP, USER_TOP, pte};
use oxok_archive::Archive;
use oxok_elf::{Elf, ElfError};

/// Why a program could not be started.
#[derive(Debug)]
pub enum LoadError {
    /// No such file in the boot archive.
    NotFound,
    /// The file is not an executable we can load.
    Elf(ElfError),
    /// Memory ran out, or the kernel refused a mapping.
    Memory(Error),
    /// argv does not fit in one page.
    ArgsTooLong,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::NotFound => write!(f, "not in the boot archive"),
            LoadError::Elf(e) => write!(f, "bad executable: {e}"),
            LoadError::Memory(e) => write!(f, "{e}"),
            LoadError::ArgsTooLong => write!(f, "arguments longer than a page"),
        }
    }
}

impl From<Error> for LoadError {
    fn from(e: Error) -> Self {
        LoadError::Memory(e)
    }
}

/// auxv keys we provide.
const AT_NULL: u64 = 0;
const AT_PHDR: u64 = 3;
const AT_PHENT: u64 = 4;
const AT_PHNUM: u64 = 5;
const AT_PAGESZ: u64 = 6;
const AT_ENTRY: u64 = 9;

/// Creates an environment running `argv[0]` from `archive` with `argv`.
pub fn load(envs: &mut EnvTable, archive: &[u8], argv: &[String]) -> Result<EnvId, LoadError> {
    let name = argv.first().map(String::as_str).unwrap_or("");
    let image = Archive::new(archive).find(name).ok_or(LoadError::NotFound)?;
    let elf = Elf::parse(image, USER_TOP).map_err(LoadError::Elf)?;
    let id = envs.create(name, 0)?;
    match populate(envs, id, &elf, argv) {
        Ok(()) => Ok(id),
        Err(e) => {
            let _ = envs.destroy(id, oxok_abi::EXIT_KILLED | 0xff);
            Err(e)
        }
    }
}

fn populate(envs: &mut EnvTable, id: EnvId, elf: &Elf<'_>, argv: &[String]) -> Result<(), LoadError> {
    let env = envs.get(id).ok_or(LoadError::Memory(Error::BadEnv))?;
    for seg in elf.segments() {
        let mut flags = 0;
        if seg.flags.write {
            flags |= pte::WRITABLE;
        }
        if !seg.flags.exec {
            flags |= pte::NO_EXECUTE;
        }
        let start = align_down(seg.vaddr, PAGE_SIZE);
        let end = align_up(seg.vaddr + seg.mem_size, PAGE_SIZE);
        let mut page = start;
        while page < end {
            let frame = owned_frame(env)?;
            // Copy the part of the file image that falls on this page.
            let file_start = seg.vaddr;
            let file_end = seg.vaddr + seg.data.len() as u64;
            let lo = page.max(file_start);
            let hi = (page + PAGE_SIZE).min(file_end);
            if lo < hi {
                let src = &seg.data[(lo - file_start) as usize..(hi - file_start) as usize];
                frame.write((lo - page) as usize, src);
            }
            env::map_frame(env, page, frame.pa(), flags)?;
            page += PAGE_SIZE;
        }
    }

    // The stack; its top page receives the initial stack image.
    let mut top_frame = None;
    let mut page = STACK_TOP - STACK_SIZE;
    while page < STACK_TOP {
        let frame = owned_frame(env)?;
        env::map_frame(env, page, frame.pa(), pte::WRITABLE | pte::NO_EXECUTE)?;
        top_frame = Some(frame);
        page += PAGE_SIZE;
    }
    let (image, sp) = initial_stack(elf, argv)?;
    if let Some(frame) = top_frame {
        frame.write((sp - (STACK_TOP - PAGE_SIZE)) as usize, &image);
    }
    env.regs = TrapFrame::new_user(elf.entry(), sp);
    Ok(())
}

/// A new frame owned by (and charged to the account of) `env`.
fn owned_frame(env: &mut env::Env) -> Result<FrameRef, Error> {
    crate::account::charge(env.quota, 1, 0)?;
    let Some(frame) = FrameRef::alloc(env.id) else {
        crate::account::uncharge(env.quota, 1, 0);
        return Err(Error::NoMemory);
    };
    if !env.owned.insert(frame.pfn()) {
        crate::account::uncharge(env.quota, 1, 0);
    }
    Ok(frame)
}

/// Builds the System V initial stack for the top page; returns its bytes and
/// the stack pointer (16-byte aligned, pointing at argc).
fn initial_stack(elf: &Elf<'_>, argv: &[String]) -> Result<(Vec<u8>, u64), LoadError> {
    // Strings at the very top, then the vector block below them.
    let strings_len: usize = argv.iter().map(|a| a.len() + 1).sum();
    let mut auxv: Vec<(u64, u64)> = Vec::new();
    if let Some(phdr) = elf.program_headers_vaddr() {
        auxv.push((AT_PHDR, phdr));
    }
    auxv.push((AT_PHENT, u64::from(elf.phent())));
    auxv.push((AT_PHNUM, u64::from(elf.phnum())));
    auxv.push((AT_PAGESZ, PAGE_SIZE));
    auxv.push((AT_ENTRY, elf.entry()));
    auxv.push((AT_NULL, 0));
    let words = 1 + argv.len() + 1 + 1 + auxv.len() * 2;
    let strings_at = STACK_TOP - strings_len as u64;
    let sp = align_down(strings_at - (words * 8) as u64, 16);
    if STACK_TOP - sp > PAGE_SIZE {
        return Err(LoadError::ArgsTooLong);
    }
    let mut image = Vec::with_capacity((STACK_TOP - sp) as usize);
    let push = |image: &mut Vec<u8>, w: u64| image.extend_from_slice(&w.to_le_bytes());
    push(&mut image, argv.len() as u64);
    let mut at = strings_at;
    for a in argv {
        push(&mut image, at);
        at += a.len() as u64 + 1;
    }
    push(&mut image, 0); // end of argv
    push(&mut image, 0); // empty envp
    for (k, v) in auxv {
        push(&mut image, k);
        push(&mut image, v);
    }
    image.resize((strings_at - sp) as usize, 0);
    for a in argv {
        image.extend_from_slice(a.as_bytes());
        image.push(0);
    }
    Ok((image, sp))
}
