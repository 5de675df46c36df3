//! Starts a program from the boot archive in a fresh environment: ELF
//! segments into newly allocated frames, a stack, and a System V initial
//! stack (argc, argv, envp, auxv) that both native Oxok programs and static
//! Linux programs understand.

use crate::arch::trapframe::TrapFrame;
use crate::env::{self, EnvId, EnvTable};
use crate::mem::access::FrameRef;
use crate::mem::{PAGE_SIZE, align_down, align_up};
use alloc::string::String;
use alloc::vec;
use core::fmt;
use oxok_abi::Error;
use oxok_abi::layout::{STACK_SIZE, STACK_TOP, USER_TOP, pte};
use oxok_archive::Archive;
use oxok_elf::{Elf, ElfError};
use oxok_sysvstack::{InitialStack, Program, StackError};

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

/// Creates an environment running `argv[0]` from `archive` with `argv`.
pub fn load(envs: &mut EnvTable, archive: &[u8], argv: &[String]) -> Result<EnvId, LoadError> {
    let name = argv.first().map(String::as_str).unwrap_or("");
    let image = Archive::new(archive).find(name).ok_or(LoadError::NotFound)?;
    let elf = Elf::parse(image, USER_TOP).map_err(LoadError::Elf)?;
    let id = envs.create(name, None)?;
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
            env::map_frame(env, page, (&frame).into(), flags)?;
            page += PAGE_SIZE;
        }
    }

    // The stack; its top page receives the initial stack image.
    let mut top_frame = None;
    let mut page = STACK_TOP - STACK_SIZE;
    while page < STACK_TOP {
        let frame = owned_frame(env)?;
        env::map_frame(env, page, (&frame).into(), pte::WRITABLE | pte::NO_EXECUTE)?;
        top_frame = Some(frame);
        page += PAGE_SIZE;
    }
    // The System V initial stack (argc, argv, no environment, auxv), laid
    // out by the same crate as the libOS's exec.
    let stack = InitialStack::new(STACK_TOP, PAGE_SIZE, Program::of(elf), argv, &[]).map_err(|e| match e {
        StackError::TooLong | StackError::BadPage => LoadError::ArgsTooLong,
        StackError::Nul => LoadError::Memory(Error::Invalid),
    })?;
    let mut page = vec![0u8; PAGE_SIZE as usize];
    stack.write(&mut page).map_err(|_| LoadError::ArgsTooLong)?;
    if let Some(frame) = top_frame {
        frame.write(stack.offset(), &page[stack.offset()..]);
    }
    *env.regs_mut() = TrapFrame::new_user(elf.entry(), stack.sp());
    Ok(())
}

/// A new frame owned by (and charged to the account of) `env`.
fn owned_frame(env: &mut env::Env) -> Result<FrameRef, Error> {
    let charge = crate::account::Charge::owned(env.account)?;
    let frame = FrameRef::alloc(env.id).ok_or(Error::NoMemory)?;
    charge.commit();
    Ok(frame)
}
