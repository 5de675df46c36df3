//! The argument classes of the call table. Every argument in
//! [`for_each_call!`](crate::for_each_call) is declared `name: Class`; the
//! kernel's generated dispatch decodes each register by its class, once,
//! before the handler runs (`kernel/src/calls/args.rs`), so a class's
//! errors are possible for every call with an argument of that class.

use crate::Error;

/// One argument class: its name in the table, what a value of it is, and
/// the errors its decoding (or the lookup it names) can return.
#[derive(Clone, Copy, Debug)]
pub struct ArgClass {
    /// Its name in the table.
    pub name: &'static str,
    /// What the register holds and what the dispatch checks.
    pub meaning: &'static str,
    /// Errors any call with such an argument may return because of it.
    pub errors: &'static [Error],
}

/// Every capability-slot class is decoded the same way: an empty or
/// out-of-range slot, or a capability of another kind, is `BadCap`; a
/// capability for an environment that has ended is `BadEnv`; one without
/// the right the call needs is `Denied`.
const CAP_ERRORS: &[Error] = &[Error::BadCap, Error::BadEnv, Error::Denied];

/// All classes.
pub const ALL: &[ArgClass] = &[
    ArgClass { name: "Word", meaning: "a plain number the call interprets itself", errors: &[] },
    ArgClass {
        name: "UserPtr",
        meaning: "a user address of a buffer the call reads or writes, checked as it is copied",
        errors: &[],
    },
    ArgClass { name: "Len", meaning: "a count of bytes, records or pages", errors: &[] },
    ArgClass {
        name: "CapSlot",
        meaning: "a position in the caller's capability list (not a CPU time slot), looked up by the call",
        errors: CAP_ERRORS,
    },
    ArgClass {
        name: "EnvCap",
        meaning: "a capability slot holding a capability for a live environment; the call checks the rights it needs",
        errors: CAP_ERRORS,
    },
    ArgClass {
        name: "FrameCap",
        meaning: "a capability slot holding a capability for a live frame of its generation; the call checks the \
                  rights it needs",
        errors: CAP_ERRORS,
    },
    ArgClass {
        name: "UserPage",
        meaning: "a page address: page-aligned and below `USER_TOP` (`BadAddress`)",
        errors: &[Error::BadAddress],
    },
    ArgClass {
        name: "PageFlags",
        meaning: "page-table entry flags: `pte::WRITABLE`, `pte::NO_EXECUTE` and the libOS bits, no other (`Invalid`)",
        errors: &[Error::Invalid],
    },
    ArgClass {
        name: "Rights",
        meaning: "capability rights bits (`rights`), no unknown bit (`Invalid`)",
        errors: &[Error::Invalid],
    },
    ArgClass { name: "FrameChoice", meaning: "a frame number, or `ANY_FRAME` for any free frame", errors: &[] },
    ArgClass {
        name: "Target",
        meaning: "a control-transfer target word (`call_target`): an environment id and the capability slot of a \
                  capability for it with call",
        errors: &[],
    },
    ArgClass {
        name: "Msg",
        meaning: "the nine message words of a protected control transfer, in the message registers \
                  (`regs::MSG_REGS`: `rsi rdx r8 r9 r10 r12 r13 r14 r15`), not a numbered argument register; \
                  the kernel carries them to the callee intact",
        errors: &[],
    },
];

/// The result classes other than a plain register (`Word`).
pub const RESULTS: &[ArgClass] = &[ArgClass {
    name: "Reply",
    meaning: "the callee's answer: its id in `rdi` and its message registers, written when it replies \
              (`pct_reply`), not when this call completes",
    errors: &[],
}];

/// The class named `name`.
pub fn by_name(name: &str) -> Option<&'static ArgClass> {
    ALL.iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Call;

    #[test]
    fn every_argument_has_a_known_class() {
        for call in Call::ALL {
            assert_eq!(call.arg_classes().len(), call.arg_names().len());
            for class in call.arg_classes() {
                assert!(by_name(class).is_some(), "{}: unknown argument class `{class}`", call.name());
            }
            for class in call.result_classes() {
                let known = *class == "Word" || RESULTS.iter().any(|c| c.name == *class);
                assert!(known, "{}: unknown result class `{class}`", call.name());
            }
        }
    }
}
