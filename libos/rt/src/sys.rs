//! System-call stubs, one function per call in `oxok_abi`'s table, generated
//! from it: `sys::console_write(ptr, len)` returns `Result<[u64; 1], Error>`
//! with as many results as the table declares. The registers come from the
//! table's convention (`oxok_abi::regs`): the numbered arguments from
//! `arg_registers!`, a transfer's message from `message_registers!`.
//!
//! The message calls (an argument of class `Msg`) take the nine words as a
//! [`Msg`]: `pct_send(target, &msg)`, `pct_reply(caller, &msg)`, and, with
//! a `Reply` result, `pct_call(target, &mut msg)`, which leaves the reply
//! (or, on failure, what the kernel left in the message registers) in
//! `msg` and returns the callee's id; `pct_wait(callee, ticket)` (two
//! words in, a `Reply` out) returns the callee's id and the reply. Every
//! other stub passes only its own arguments (`syscall_args!`: the argument
//! registers past them are left as they are and taken as changed). These
//! and [`raw`] (all six registers, for a caller that has them) are the
//! only `syscall` instructions of the libOS outside the naked code that
//! composes `oxok_abi::syscall_asm!` fragments.

use core::arch::asm;
use oxok_abi::{Call, Error};

/// A protected control transfer's message: the nine message registers.
pub type Msg = [u64; oxok_abi::regs::MSG_WORDS];

/// Raw results of one `syscall`: status, then `rdi rsi rdx`.
pub struct Raw {
    /// `rax` on return: 0 or an error code.
    pub status: u64,
    /// `rdi rsi rdx` on return.
    pub values: [u64; 3],
}

/// `syscall` number `nr` with the call's own arguments only (0 to 6, in
/// the argument registers `oxok_abi::arg_registers!` gives, the first
/// three also the result registers): the registers past them carry
/// nothing in and are taken as changed, so a stub loads no zeros into
/// them. The operands are built register by register ([`syscall_ops`]).
macro_rules! syscall_args {
    ([$($r:tt)*] $nr:expr; $($a:expr,)*) => {{
        let (status, r0, r1, r2): (u64, u64, u64, u64);
        syscall_ops!(status $nr; [$($r)*] [r0 r1 r2 _ _ _] [$($a,)*] []);
        Raw { status, values: [r0, r1, r2] }
    }};
}

/// [`syscall_args`]' operands: for each argument register, `inlateout`
/// with the next argument while there is one, else `lateout`; each into
/// its result (or `_`). Then the `syscall` with all of them.
macro_rules! syscall_ops {
    ($s:ident $nr:expr; [$r:tt $($rr:tt)*] [$o:tt $($oo:tt)*] [$a:expr, $($aa:expr,)*] [$($ops:tt)*]) => {
        syscall_ops!($s $nr; [$($rr)*] [$($oo)*] [$($aa,)*] [$($ops)* inlateout($r) $a => $o,])
    };
    ($s:ident $nr:expr; [$r:tt $($rr:tt)*] [$o:tt $($oo:tt)*] [] [$($ops:tt)*]) => {
        syscall_ops!($s $nr; [$($rr)*] [$($oo)*] [] [$($ops)* lateout($r) $o,])
    };
    ($s:ident $nr:expr; [] [] [] [$($ops:tt)*]) => {
        // SAFETY: the kernel reads only registers and memory it checks; it
        // clobbers rcx and r11 (and, for restartable calls, may rewrite the
        // argument registers) and preserves everything else.
        unsafe {
            asm!(
                "syscall",
                inlateout("rax") $nr => $s,
                $($ops)*
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
        }
    };
}

/// Executes `syscall` with number `nr` and six argument registers.
#[inline(always)]
pub fn raw(nr: u64, a: [u64; 6]) -> Raw {
    oxok_abi::arg_registers!(syscall_args, nr; a[0], a[1], a[2], a[3], a[4], a[5],)
}

/// Turns a raw status into a `Result`; unknown codes read as `Invalid`.
#[inline(always)]
pub fn check(status: u64) -> Result<(), Error> {
    match status {
        0 => Ok(()),
        code => Err(Error::from_code(code).unwrap_or(Error::Invalid)),
    }
}

/// A message call: `rdi` (the first argument register) and the message
/// registers in and out, status in `rax`.
macro_rules! msg_syscall {
    ([$a0:tt $($ar:tt)*] [$m0:tt $m1:tt $m2:tt $m3:tt $m4:tt $m5:tt $m6:tt $m7:tt $m8:tt] $nr:expr, $arg:expr, $m:ident) => {{
        let (status, out);
        // The callee may write memory this environment shares with it, so
        // the block is not `nomem`.
        // SAFETY: per the ABI every register except rax, rcx, r11, `rdi` and
        // the message registers (declared in-out here) is preserved.
        unsafe {
            asm!(
                "syscall",
                inlateout("rax") $nr => status,
                inlateout($a0) $arg => out,
                inlateout($m0) $m[0] => $m[0],
                inlateout($m1) $m[1] => $m[1],
                inlateout($m2) $m[2] => $m[2],
                inlateout($m3) $m[3] => $m[3],
                inlateout($m4) $m[4] => $m[4],
                inlateout($m5) $m[5] => $m[5],
                inlateout($m6) $m[6] => $m[6],
                inlateout($m7) $m[7] => $m[7],
                inlateout($m8) $m[8] => $m[8],
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
        }
        (status, out)
    }};
}

/// Adds the argument registers in front of the message registers.
macro_rules! with_arg_registers {
    ([$($m:tt)*] $($rest:tt)*) => {
        oxok_abi::arg_registers!(msg_syscall, [$($m)*] $($rest)*)
    };
}

/// Issues message call `nr` with `arg` in the first argument register and
/// `msg` in the message registers; returns the status and `rdi`, and
/// leaves what the kernel put in the message registers in `msg`.
#[inline(always)]
fn msg_call(nr: u64, arg: u64, msg: &mut Msg) -> (u64, u64) {
    oxok_abi::message_registers!(with_arg_registers, nr, arg, msg)
}

macro_rules! generate_stubs {
    ($($(#[doc = $doc:literal])* $idx:literal => $name:ident($($arg:ident: $class:ident),*) -> [$($res:ident $(: $rclass:ident)?),*];)*) => {
        $(stub! { $(#[doc = $doc])* $name($($arg: $class),*) -> [$($res $(: $rclass)?),*] })*
    };
}

macro_rules! stub {
    ($(#[doc = $doc:literal])* $name:ident($a:ident: $ac:ident, $m:ident: Msg) -> [$r:ident: Reply]) => {
        $(#[doc = $doc])*
        #[inline(always)]
        pub fn $name($a: u64, $m: &mut Msg) -> Result<u64, Error> {
            let (status, id) = msg_call(Call::$name.number(), $a, $m);
            check(status).map(|()| id)
        }
    };
    ($(#[doc = $doc:literal])* $name:ident($a:ident: $ac:ident, $t:ident: $tc:ident) -> [$r:ident: Reply]) => {
        $(#[doc = $doc])*
        #[inline(always)]
        pub fn $name($a: u64, $t: u64) -> Result<(u64, Msg), Error> {
            // The second argument register is the first message register
            // (`oxok_abi::regs`, checked by its host tests), so `$t` goes
            // in as word 0 of the message and the reply comes back over it.
            let mut reply: Msg = [0; oxok_abi::regs::MSG_WORDS];
            reply[0] = $t;
            let (status, id) = msg_call(Call::$name.number(), $a, &mut reply);
            check(status).map(|()| (id, reply))
        }
    };
    ($(#[doc = $doc:literal])* $name:ident($a:ident: $ac:ident, $m:ident: Msg) -> []) => {
        $(#[doc = $doc])*
        #[inline(always)]
        pub fn $name($a: u64, $m: &Msg) -> Result<(), Error> {
            let mut words = *$m;
            check(msg_call(Call::$name.number(), $a, &mut words).0)
        }
    };
    ($(#[doc = $doc:literal])* $name:ident($($arg:ident: $class:ident),*) -> [$($res:ident),*]) => {
        $(#[doc = $doc])*
        #[inline(always)]
        pub fn $name($($arg: u64),*) -> Result<[u64; oxok_abi::__count!($($res)*)], Error> {
            let r = oxok_abi::arg_registers!(syscall_args, Call::$name.number(); $($arg,)*);
            check(r.status)?;
            let mut out = [0u64; oxok_abi::__count!($($res)*)];
            let n = out.len();
            out.copy_from_slice(&r.values[..n]);
            Ok(out)
        }
    };
}

oxok_abi::for_each_call!(generate_stubs);
