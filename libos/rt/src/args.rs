//! Program arguments, read from the System V initial stack.

/// argv as the program received it.
#[derive(Clone, Copy)]
pub struct Args {
    argc: usize,
    argv: *const *const u8,
}

// SAFETY: `Args` only points at the initial stack's strings, which are
// never written and live as long as the program; an environment runs one
// thread, and upcall handlers only read them.
unsafe impl Send for Args {}

impl Args {
    /// Reads argc/argv at the initial stack pointer.
    ///
    /// # Safety
    /// `sp` must point at a System V initial stack whose argv strings are
    /// NUL-terminated and stay mapped for the program's life.
    pub(crate) unsafe fn from_initial_stack(sp: *const u64) -> Args {
        // SAFETY: per the contract, `sp` points at argc followed by argv.
        unsafe { Args { argc: *sp as usize, argv: sp.add(1) as *const *const u8 } }
    }

    /// Number of arguments, program name included.
    pub fn len(&self) -> usize {
        self.argc
    }

    /// True if there are no arguments at all (not even a name).
    pub fn is_empty(&self) -> bool {
        self.argc == 0
    }

    /// Argument `i`; arguments that are not UTF-8 read as "".
    pub fn get(&self, i: usize) -> Option<&'static str> {
        if i >= self.argc {
            return None;
        }
        // SAFETY: i < argc, so argv[i] is a valid pointer to a NUL-terminated
        // string that lives as long as the program (`from_initial_stack`).
        unsafe {
            let p = *self.argv.add(i);
            let mut n = 0;
            while *p.add(n) != 0 {
                n += 1;
            }
            Some(core::str::from_utf8(core::slice::from_raw_parts(p, n)).unwrap_or(""))
        }
    }

    /// The environment strings (`KEY=value`) the loader left after argv,
    /// as raw C strings; read by the libOS's `environ`.
    pub fn envp(&self) -> impl Iterator<Item = &'static str> {
        // SAFETY: the System V stack continues after argv's NULL with the
        // envp pointers and their NULL (`from_initial_stack`'s contract).
        let mut p = unsafe { self.argv.add(self.argc + 1) };
        core::iter::from_fn(move || {
            // SAFETY: `p` stays within the envp vector until its NULL, whose
            // strings are NUL-terminated and live as long as the program.
            unsafe {
                let s = *p;
                if s.is_null() {
                    return None;
                }
                p = p.add(1);
                let mut n = 0;
                while *s.add(n) != 0 {
                    n += 1;
                }
                Some(core::str::from_utf8(core::slice::from_raw_parts(s, n)).unwrap_or(""))
            }
        })
    }

    /// All arguments in order.
    pub fn iter(&self) -> impl Iterator<Item = &'static str> + '_ {
        (0..self.argc).filter_map(|i| self.get(i))
    }
}
