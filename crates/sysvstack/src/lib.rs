//! The System V initial stack a new program finds at `rsp` (the x86-64
//! psABI, §3.4.1), laid out in one place for both the kernel's boot loader
//! and the libOS's `exec`.
//!
//! Everything lies in the stack's top page, `[top - page, top)`: the
//! argument and environment strings at the very top, and below them, from
//! a 16-byte-aligned `rsp` up, argc, the argv pointers, NULL, the envp
//! pointers (`KEY=value` strings), NULL, the auxiliary vector (`AT_PHDR`
//! when known, `AT_PHENT`, `AT_PHNUM`, `AT_PAGESZ`, `AT_ENTRY`, `AT_NULL`)
//! and zero padding up to the strings.
//!
//! [`InitialStack::new`] checks that the image fits (and that no string
//! holds a NUL); [`InitialStack::write`] fills a copy of the top page. No
//! allocation, no `unsafe`: both sides hand in the page they will map.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(test)]
mod tests;

/// Auxiliary-vector key: end of the vector.
pub const AT_NULL: u64 = 0;
/// Auxiliary-vector key: where the program headers are mapped.
pub const AT_PHDR: u64 = 3;
/// Auxiliary-vector key: size of one program header.
pub const AT_PHENT: u64 = 4;
/// Auxiliary-vector key: number of program headers.
pub const AT_PHNUM: u64 = 5;
/// Auxiliary-vector key: the page size.
pub const AT_PAGESZ: u64 = 6;
/// Auxiliary-vector key: the program's entry point.
pub const AT_ENTRY: u64 = 9;

/// Most auxiliary-vector entries (the terminating `AT_NULL` included).
pub const AUXV_MAX: usize = 6;

/// What the auxiliary vector says about the program (read from its ELF
/// header by the caller).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Program {
    /// Virtual address of the program headers, when a segment maps them.
    pub phdr: Option<u64>,
    /// Size of one program header.
    pub phent: u64,
    /// Number of program headers.
    pub phnum: u64,
    /// Entry point.
    pub entry: u64,
}

impl Program {
    /// What the auxiliary vector says about `elf`.
    pub fn of(elf: &oxok_elf::Elf<'_>) -> Program {
        Program {
            phdr: elf.program_headers_vaddr(),
            phent: u64::from(elf.phent()),
            phnum: u64::from(elf.phnum()),
            entry: elf.entry(),
        }
    }
}

/// Why an initial stack cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackError {
    /// The strings and vectors do not fit in the top page.
    TooLong,
    /// A string contains NUL (it would end early).
    Nul,
    /// The page handed to [`InitialStack::write`] is not the page's size.
    BadPage,
}

/// A computed initial stack, checked to fit in the top page.
#[derive(Clone, Debug)]
pub struct InitialStack<'a, S> {
    argv: &'a [S],
    envp: &'a [S],
    auxv: [(u64, u64); AUXV_MAX],
    auxc: usize,
    /// One past the stack's highest byte.
    top: u64,
    /// Size of the top page.
    page: u64,
    /// Where the strings start.
    strings_at: u64,
    /// The stack pointer: the address of argc.
    sp: u64,
}

impl<'a, S: AsRef<[u8]>> InitialStack<'a, S> {
    /// The layout for `program` with `argv` and `envp`, for a stack whose
    /// top page is `[top - page, top)` (`page` also goes into `AT_PAGESZ`).
    pub fn new(top: u64, page: u64, program: Program, argv: &'a [S], envp: &'a [S]) -> Result<Self, StackError> {
        let mut auxv = [(AT_NULL, 0); AUXV_MAX];
        let mut auxc = 0;
        let mut push = |key: u64, value: u64| {
            auxv[auxc] = (key, value);
            auxc += 1;
        };
        if let Some(phdr) = program.phdr {
            push(AT_PHDR, phdr);
        }
        push(AT_PHENT, program.phent);
        push(AT_PHNUM, program.phnum);
        push(AT_PAGESZ, page);
        push(AT_ENTRY, program.entry);
        push(AT_NULL, 0);

        if argv.iter().chain(envp).any(|a| a.as_ref().contains(&0)) {
            return Err(StackError::Nul);
        }
        let too_long = StackError::TooLong;
        let strings_len = argv
            .iter()
            .chain(envp)
            .try_fold(0u64, |n, a| n.checked_add(a.as_ref().len() as u64 + 1))
            .ok_or(too_long)?;
        let words = 3u64
            .checked_add(argv.len() as u64)
            .and_then(|w| w.checked_add(envp.len() as u64))
            .and_then(|w| w.checked_add(2 * auxc as u64))
            .ok_or(too_long)?;
        let strings_at = top.checked_sub(strings_len).ok_or(too_long)?;
        let vectors_at = strings_at.checked_sub(words.checked_mul(8).ok_or(too_long)?).ok_or(too_long)?;
        let sp = vectors_at - vectors_at % 16;
        let page_base = top.checked_sub(page).ok_or(too_long)?;
        if sp < page_base {
            return Err(too_long);
        }
        Ok(InitialStack { argv, envp, auxv, auxc, top, page, strings_at, sp })
    }

    /// The initial stack pointer (16-byte aligned, pointing at argc).
    pub fn sp(&self) -> u64 {
        self.sp
    }

    /// Offset of the stack pointer in the top page: the image is
    /// `page[offset..]`.
    pub fn offset(&self) -> usize {
        (self.sp - (self.top - self.page)) as usize
    }

    /// The auxiliary vector, `AT_NULL` last.
    pub fn auxv(&self) -> &[(u64, u64)] {
        &self.auxv[..self.auxc]
    }

    /// Writes the image into `page`, a copy of the stack's top page (only
    /// `page[self.offset()..]` changes).
    pub fn write(&self, page: &mut [u8]) -> Result<(), StackError> {
        if page.len() as u64 != self.page {
            return Err(StackError::BadPage);
        }
        let mut w = Writer { page, base: self.top - self.page, at: self.sp };
        w.word(self.argv.len() as u64)?;
        let mut string = self.strings_at;
        for a in self.argv {
            w.word(string)?;
            string += a.as_ref().len() as u64 + 1;
        }
        w.word(0)?; // end of argv
        for e in self.envp {
            w.word(string)?;
            string += e.as_ref().len() as u64 + 1;
        }
        w.word(0)?; // end of envp
        for &(key, value) in self.auxv() {
            w.word(key)?;
            w.word(value)?;
        }
        while w.at < self.strings_at {
            w.bytes(&[0])?;
        }
        for a in self.argv.iter().chain(self.envp) {
            w.bytes(a.as_ref())?;
            w.bytes(&[0])?;
        }
        Ok(())
    }
}

/// Writes consecutive bytes into the top page by stack address.
struct Writer<'p> {
    page: &'p mut [u8],
    base: u64,
    at: u64,
}

impl Writer<'_> {
    fn bytes(&mut self, data: &[u8]) -> Result<(), StackError> {
        let offset = usize::try_from(self.at.wrapping_sub(self.base)).map_err(|_| StackError::TooLong)?;
        let dst = self.page.get_mut(offset..offset.saturating_add(data.len())).ok_or(StackError::TooLong)?;
        dst.copy_from_slice(data);
        self.at += data.len() as u64;
        Ok(())
    }

    fn word(&mut self, w: u64) -> Result<(), StackError> {
        self.bytes(&w.to_le_bytes())
    }
}
