//! The System V initial stack a new program finds at `rsp`: laid out by
//! `oxok-sysvstack`, the same crate the kernel's boot loader uses, in the
//! stack's top page (strings at the very top; argc, argv, envp and the
//! auxiliary vector below them from a 16-byte-aligned `rsp`).

use oxok_abi::Error;
use oxok_abi::layout::{PAGE_SIZE, STACK_TOP};
use oxok_elf::Elf;
use oxok_sysvstack::Program;

/// A computed initial stack, checked to fit in the top page.
pub(super) struct InitialStack<'a>(oxok_sysvstack::InitialStack<'a, &'a str>);

impl<'a> InitialStack<'a> {
    /// The layout for `elf` with `argv`; `None` if it does not fit in one
    /// page or an argument contains NUL.
    pub(super) fn new(elf: &Elf<'_>, argv: &'a [&'a str], envp: &'a [&'a str]) -> Option<InitialStack<'a>> {
        oxok_sysvstack::InitialStack::new(STACK_TOP, PAGE_SIZE, Program::of(elf), argv, envp).ok().map(InitialStack)
    }

    /// The initial stack pointer (16-byte aligned, pointing at argc).
    pub(super) fn sp(&self) -> u64 {
        self.0.sp()
    }

    /// Writes the image into `page`, the contents of the stack's top page.
    pub(super) fn write(&self, page: &mut [u8]) -> Result<(), Error> {
        self.0.write(page).map_err(|_| Error::Invalid)
    }
}
