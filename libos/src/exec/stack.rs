//! The System V initial stack a new program finds at `rsp`, laid out exactly
//! as the kernel's boot loader lays it out (`kernel/src/loader.rs`): in the
//! stack's top page, the argument strings at the very top and below them,
//! from a 16-byte-aligned `rsp` up: argc, the argv pointers, NULL, the envp
//! pointers (`KEY=value` strings), NULL, the auxiliary vector (`AT_PHDR` when known, `AT_PHENT`,
//! `AT_PHNUM`, `AT_PAGESZ`, `AT_ENTRY`, `AT_NULL`), zero padding.

use oxok_abi::Error;
use oxok_abi::layout::{PAGE_SIZE, STACK_TOP};
use oxok_elf::Elf;

const AT_NULL: u64 = 0;
const AT_PHDR: u64 = 3;
const AT_PHENT: u64 = 4;
const AT_PHNUM: u64 = 5;
const AT_PAGESZ: u64 = 6;
const AT_ENTRY: u64 = 9;

/// Most auxiliary-vector entries (the terminating `AT_NULL` included).
const AUXV_MAX: usize = 6;

/// Address of the stack's top page, which holds the whole image.
const TOP_PAGE: u64 = STACK_TOP - PAGE_SIZE;

/// A computed initial stack, checked to fit in the top page.
pub(super) struct InitialStack<'a> {
    argv: &'a [&'a str],
    envp: &'a [&'a str],
    auxv: [(u64, u64); AUXV_MAX],
    auxc: usize,
    /// Where the strings start.
    strings_at: u64,
    /// The stack pointer: the address of argc.
    sp: u64,
}

impl<'a> InitialStack<'a> {
    /// The layout for `elf` with `argv`; `None` if it does not fit in one
    /// page or an argument contains NUL.
    pub(super) fn new(elf: &Elf<'_>, argv: &'a [&'a str], envp: &'a [&'a str]) -> Option<InitialStack<'a>> {
        let mut auxv = [(AT_NULL, 0); AUXV_MAX];
        let mut auxc = 0;
        let mut push = |key: u64, value: u64| {
            auxv[auxc] = (key, value);
            auxc += 1;
        };
        if let Some(phdr) = elf.program_headers_vaddr() {
            push(AT_PHDR, phdr);
        }
        push(AT_PHENT, u64::from(elf.phent()));
        push(AT_PHNUM, u64::from(elf.phnum()));
        push(AT_PAGESZ, PAGE_SIZE);
        push(AT_ENTRY, elf.entry());
        push(AT_NULL, 0);

        if argv.iter().chain(envp).any(|a| a.as_bytes().contains(&0)) {
            return None;
        }
        let strings_len = argv.iter().chain(envp).try_fold(0u64, |n, a| n.checked_add(a.len() as u64 + 1))?;
        let words =
            3u64.checked_add(argv.len() as u64)?.checked_add(envp.len() as u64)?.checked_add(2 * auxc as u64)?;
        let strings_at = STACK_TOP.checked_sub(strings_len)?;
        let vectors_at = strings_at.checked_sub(words.checked_mul(8)?)?;
        let sp = vectors_at - vectors_at % 16;
        (sp >= TOP_PAGE).then_some(InitialStack { argv, envp, auxv, auxc, strings_at, sp })
    }

    /// The initial stack pointer (16-byte aligned, pointing at argc).
    pub(super) fn sp(&self) -> u64 {
        self.sp
    }

    /// Writes the image into `page`, the contents of the stack's top page.
    pub(super) fn write(&self, page: &mut [u8]) -> Result<(), Error> {
        let mut w = Writer { page, at: self.sp };
        w.word(self.argv.len() as u64)?;
        let mut string = self.strings_at;
        for a in self.argv {
            w.word(string)?;
            string += a.len() as u64 + 1;
        }
        w.word(0)?; // end of argv
        for e in self.envp {
            w.word(string)?;
            string += e.len() as u64 + 1;
        }
        w.word(0)?; // end of envp
        for &(key, value) in &self.auxv[..self.auxc] {
            w.word(key)?;
            w.word(value)?;
        }
        while w.at < self.strings_at {
            w.bytes(&[0])?;
        }
        for a in self.argv.iter().chain(self.envp) {
            w.bytes(a.as_bytes())?;
            w.bytes(&[0])?;
        }
        Ok(())
    }
}

/// Writes consecutive bytes into the top page by stack address.
struct Writer<'p> {
    page: &'p mut [u8],
    at: u64,
}

impl Writer<'_> {
    fn bytes(&mut self, data: &[u8]) -> Result<(), Error> {
        let offset = usize::try_from(self.at.wrapping_sub(TOP_PAGE)).map_err(|_| Error::Invalid)?;
        let dst = self.page.get_mut(offset..offset.saturating_add(data.len())).ok_or(Error::Invalid)?;
        dst.copy_from_slice(data);
        self.at += data.len() as u64;
        Ok(())
    }

    fn word(&mut self, w: u64) -> Result<(), Error> {
        self.bytes(&w.to_le_bytes())
    }
}
