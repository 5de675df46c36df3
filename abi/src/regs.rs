//! The register convention of a call, as data and as assembly generated
//! from the call table, so that no code outside the generated stubs names
//! a call's number or its registers by hand.
//!
//! * [`ARG_REGS`], [`RESULT_REGS`] and [`MSG_REGS`]: where the numbered
//!   arguments, the results and a transfer's nine message words travel
//!   (the crate documentation's table). The libOS runtime's stubs take
//!   their registers from the macros behind them (`arg_registers!`,
//!   `message_registers!`).
//! * `syscall_asm!`: the instructions that issue one call from naked
//!   assembly (the PCT entry's `pct_reply`, fork's switch): each argument,
//!   named as in the table, loaded into its register, then the number into
//!   `eax` and `syscall`. A misspelt or missing argument does not compile.
//! * `msg_push!` and `msg_pop!`: the message registers pushed so that
//!   they lie on the stack as a `[u64; 9]` (word 0 lowest), and popped back.

/// Calls its argument macro with the six numbered argument registers, in
/// order, as string literals in brackets, then any further tokens given.
#[doc(hidden)]
#[macro_export]
macro_rules! arg_registers {
    ($($m:ident)::+ $(, $($more:tt)*)?) => {
        $($m)::+!(["rdi" "rsi" "rdx" "r10" "r8" "r9"] $($($more)*)?)
    };
}

/// Calls its argument macro with the nine message registers, in word
/// order, as string literals in brackets, then any further tokens given.
#[doc(hidden)]
#[macro_export]
macro_rules! message_registers {
    ($($m:ident)::+ $(, $($more:tt)*)?) => {
        $($m)::+!(["rsi" "rdx" "r8" "r9" "r10" "r12" "r13" "r14" "r15"] $($($more)*)?)
    };
}

macro_rules! as_array {
    ([$($r:tt)*]) => {
        [$($r),*]
    };
}

/// The numbered argument registers: argument `i` of a call is in
/// `ARG_REGS[i]`.
pub const ARG_REGS: [&str; crate::MAX_ARGS] = arg_registers!(as_array);

/// The result registers: result `i` is in `RESULT_REGS[i]`.
pub const RESULT_REGS: [&str; crate::MAX_RESULTS] = ["rdi", "rsi", "rdx"];

/// Words in a protected control transfer's message.
pub const MSG_WORDS: usize = 9;

/// The message registers of a protected control transfer (argument class
/// `Msg`, result class `Reply`): word `i` travels in `MSG_REGS[i]`. `rbx`
/// and `rbp` cross the kernel too, but are not message words.
pub const MSG_REGS: [&str; MSG_WORDS] = message_registers!(as_array);

/// How many numbered argument registers an argument of a class takes.
#[doc(hidden)]
#[macro_export]
macro_rules! __arg_regs {
    (Msg) => {
        0usize
    };
    ($class:ident) => {
        1usize
    };
}

/// How many result registers a list of results takes (a `Reply` none).
#[doc(hidden)]
#[macro_export]
macro_rules! __result_regs {
    () => { 0usize };
    ($res:ident : Reply $(, $($rest:tt)*)?) => { 0usize + $crate::__result_regs!($($($rest)*)?) };
    ($res:ident $(, $($rest:tt)*)?) => { 1usize + $crate::__result_regs!($($($rest)*)?) };
}

/// A result's class name (`Word` when the table gives none).
#[doc(hidden)]
#[macro_export]
macro_rules! __result_class {
    () => {
        "Word"
    };
    ($class:ident) => {
        stringify!($class)
    };
}

/// The loads of a call's arguments: each `(class value)` paired with the
/// next argument register. A value is a string (an operand: a register,
/// a memory reference, a number) or `in_place` (already in its register);
/// a `Msg` argument must be `in_place` (the message registers are the
/// caller's, see `msg_pop!`).
#[doc(hidden)]
#[macro_export]
macro_rules! __asm_args {
    ([$($r:tt)*]) => { "" };
    ([$($rs:tt)*] (Msg in_place) $($more:tt)*) => {
        $crate::__asm_args!([$($rs)*] $($more)*)
    };
    ([$($rs:tt)*] (Msg $v:tt) $($more:tt)*) => {
        compile_error!("a `Msg` argument is `in_place`: the message registers are loaded by the caller")
    };
    ([$r:tt $($rs:tt)*] ($class:ident in_place) $($more:tt)*) => {
        $crate::__asm_args!([$($rs)*] $($more)*)
    };
    ([$r:tt $($rs:tt)*] ($class:ident $v:literal) $($more:tt)*) => {
        concat!("mov ", $r, ", ", $v, "\n", $crate::__asm_args!([$($rs)*] $($more)*))
    };
}

/// The number of call index `idx` as an assembler expression.
#[doc(hidden)]
#[macro_export]
macro_rules! __asm_number {
    ($idx:literal) => {
        concat!("mov eax, ", $crate::__call_base!(), " + ", $idx, "\n", "syscall\n")
    };
}

macro_rules! define_syscall_asm {
    ($($(#[doc = $doc:literal])* $idx:literal => $name:ident($($arg:ident: $class:ident),*) -> [$($res:ident $(: $rclass:ident)?),*];)*) => {
        define_syscall_asm!(@emit ($) $($idx $name ($($arg $class)*))*);
    };
    (@emit ($d:tt) $($idx:literal $name:ident ($($arg:ident $class:ident)*))*) => {
        /// The assembly that issues one call from naked code, generated
        /// from the call table: `syscall_asm!(name(arg = value, …))` with
        /// every argument of the table, in its order, each a string operand
        /// loaded into its register (`ARG_REGS`) or `in_place`; then the
        /// call's number into `eax` and `syscall`. `rcx`, `r11` and `rax`
        /// are clobbered; the results are where the table says. A string
        /// literal, for `naked_asm!` and `concat!`.
        #[macro_export]
        macro_rules! syscall_asm {
            $(
                ($name($($arg = $d $arg:tt),*)) => {
                    concat!(
                        $crate::arg_registers!($crate::__asm_args, $(($class $d $arg))*),
                        $crate::__asm_number!($idx)
                    )
                };
            )*
        }
    };
}

crate::for_each_call!(define_syscall_asm);

/// Pushes the message registers so that they lie on the stack as a
/// `[u64; 9]`, word 0 at the lowest address (nine pushes, last word
/// first). A string literal for `naked_asm!`.
#[macro_export]
macro_rules! msg_push {
    () => {
        $crate::message_registers!($crate::__msg_push)
    };
}

/// Pops the nine words `msg_push!` pushed back into the message
/// registers. A string literal for `naked_asm!`.
#[macro_export]
macro_rules! msg_pop {
    () => {
        $crate::message_registers!($crate::__msg_pop)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __msg_push {
    ([]) => { "" };
    ([$r:tt $($rest:tt)*]) => { concat!($crate::__msg_push!([$($rest)*]), "push ", $r, "\n") };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __msg_pop {
    ([]) => { "" };
    ([$r:tt $($rest:tt)*]) => { concat!("pop ", $r, "\n", $crate::__msg_pop!([$($rest)*])) };
}

/// [`CALL_BASE`](crate::CALL_BASE) as a literal (for assembly strings).
#[doc(hidden)]
#[macro_export]
macro_rules! __call_base {
    () => {
        0x6f78_0000
    };
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Call;
    use std::format;
    use std::vec::Vec;

    /// Checks one fragment against the table: argument `i` given as
    /// `values[i]` is loaded into `ARG_REGS[i]` (none for `in_place`),
    /// then the call's number goes into `eax`, then `syscall`.
    fn check(call: Call, text: &str, values: &[&str]) {
        let lines: Vec<&str> = text.lines().collect();
        let loads: Vec<&str> = values.iter().copied().filter(|v| *v != "in_place").collect();
        assert_eq!(lines.len(), loads.len() + 2, "{}: {text}", call.name());
        let mut line = 0;
        for (i, v) in values.iter().enumerate() {
            if *v == "in_place" {
                continue;
            }
            assert_eq!(lines[line], format!("mov {}, {v}", ARG_REGS[i]), "{}: argument {i}", call.name());
            line += 1;
        }
        let expr = lines[line].strip_prefix("mov eax, ").expect("the number into eax");
        let (base, idx) = expr.split_once(" + ").expect("base + index");
        let number = base.parse::<u64>().unwrap() + idx.parse::<u64>().unwrap();
        assert_eq!(number, call.number(), "{}", call.name());
        assert_eq!(lines[line + 1], "syscall");
    }

    #[test]
    fn every_call_fragment_has_its_number() {
        macro_rules! all {
            ($($(#[doc = $doc:literal])* $idx:literal => $name:ident($($arg:ident: $class:ident),*) -> [$($res:ident $(: $rc:ident)?),*];)*) => {
                $(check(Call::$name, syscall_asm!($name($($arg = in_place),*)), &[$({ let _ = stringify!($arg); "in_place" }),*] as &[&str]);)*
            };
        }
        crate::for_each_call!(all);
    }

    #[test]
    fn fragments_load_the_table_registers() {
        let text = syscall_asm!(page_batch(env_slot = "[rbx + 8]", entries = "r12", count = "7"));
        check(Call::page_batch, text, &["[rbx + 8]", "r12", "7"]);
        check(Call::env_set_state, syscall_asm!(env_set_state(env_slot = "r13", buf = "r14")), &["r13", "r14"]);
        check(Call::env_run, syscall_asm!(env_run(env_slot = in_place)), &["in_place"]);
        check(Call::pct_reply, syscall_asm!(pct_reply(caller = "0", reply = in_place)), &["0", "in_place"]);
        // All six registers, in order.
        let six = arg_registers!(__asm_args, (Word "a") (Word "b") (Word "c") (Word "d") (Word "e") (Word "f"));
        let regs: Vec<&str> = six.lines().map(|l| &l[4..l.find(',').unwrap()]).collect();
        assert_eq!(regs, ARG_REGS);
        // Results come back in the first argument registers (the runtime's
        // stubs rely on it).
        assert_eq!(RESULT_REGS, ARG_REGS[..3]);
        // `pct_wait`'s second argument (the ticket) is message word 0: its
        // stub sends it there and reads the reply over it.
        assert_eq!(ARG_REGS[1], MSG_REGS[0]);
        // The table's argument names are what naked code must spell.
        assert_eq!(Call::page_batch.arg_names(), ["env_slot", "entries", "count"]);
    }

    #[test]
    fn message_words_lie_in_order() {
        let pushed: Vec<&str> = msg_push!().lines().map(|l| l.strip_prefix("push ").unwrap()).collect();
        let mut words = MSG_REGS.to_vec();
        words.reverse();
        assert_eq!(pushed, words, "pushed last word first, so word 0 is lowest");
        let popped: Vec<&str> = msg_pop!().lines().map(|l| l.strip_prefix("pop ").unwrap()).collect();
        assert_eq!(popped, MSG_REGS);
        assert!(MSG_REGS.iter().all(|r| !["rax", "rdi", "rcx", "r11", "rsp"].contains(r)));
    }

    #[test]
    fn message_classes_sit_where_the_registers_allow() {
        for &call in Call::ALL {
            let classes = call.arg_classes();
            if let Some(at) = classes.iter().position(|c| *c == "Msg") {
                // `rdi` (one numbered argument at most) and the message.
                assert!(at <= 1 && at == classes.len() - 1, "{}", call.name());
            }
            for (i, class) in call.result_classes().iter().enumerate() {
                if *class == "Reply" {
                    assert_eq!(i, call.result_classes().len() - 1, "{}", call.name());
                    assert_eq!(call.results(), 0, "{}: a reply is written by the callee", call.name());
                }
            }
        }
        assert_eq!(Call::pct_call.args(), 1);
        assert_eq!(Call::pct_call.result_classes(), ["Reply"]);
        assert_eq!(Call::mem_info.result_classes(), ["Word", "Word", "Word"]);
    }
}
