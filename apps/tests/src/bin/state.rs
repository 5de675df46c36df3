//! state: Fluke's state export. The program builds a child environment from
//! outside — a code page holding a small position-independent routine and
//! a stack page — sets its complete state (rip, rsp, distinctive values in
//! every register) with `env_set_state`, reads it back identical with
//! `env_get_state`, copies it into a second, fresh environment, and runs
//! both. Each child prints `state-child: r12=0x0123456789abcdef
//! r15=0xfedcba9876543210` from its registers and exits with status 42 (its
//! `rbx`). Hostile parts: state calls through empty, wrong-kind and
//! read-only capabilities (`BadCap`, `Denied`), kernel and non-canonical
//! `rip`/`rsp`/upcall entries (`Invalid`, nothing changed), bad buffers
//! (`BadAddress`), forced user flags; and the caller replacing its own
//! state resumes from the new state.
//!
//! Then the rest of the state (version 2): a second child's complete state
//! — x87/SSE (a marker in xmm0, MXCSR 0x7f80), FS and GS bases (pointing at
//! markers in its stack page), a wakeup predicate with a parameter, and
//! registers that start it on `env_sleep(1)` — is set, read back
//! identical, refused whole when any part is bad (version, MXCSR reserved
//! bits, bases at USER_TOP, a predicate that does not verify, a bad serving
//! flag), and copied into a fresh environment. Both run: the imported
//! predicate holds, so the sleep returns at once, and each prints
//! `state-fpu: sleep=0 xmm0=… fs0=… gs0=… mxcsr=…` from its own registers.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::layout::{PAGE_SIZE, USER_TOP, pte};
use oxok_libos::abi::{
    ANY_FRAME, Call, ENV_CREATED, ENV_RUNNABLE, ENV_SLEEPING, ENV_STATE_VERSION, EnvState, Error, FpuState, Regs,
    rights, upcall,
};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

/// Where the parent writes the code before handing it over.
const SCRATCH: u64 = 0x1400_0000_0000;
/// The child's code and stack pages.
const CHILD_CODE: u64 = 0x50_0000;
const CHILD_STACK: u64 = 0x6fff_ffff_f000;
const R12: u64 = 0x0123_4567_89ab_cdef;
const R15: u64 = 0xfedc_ba98_7654_3210;
const EXIT: u64 = 42;
const FLAGS_IF: u64 = 1 << 9;
const FLAGS_RESERVED: u64 = 1 << 1;
const FLAGS_CF: u64 = 1;
const FLAGS_IOPL3: u64 = 3 << 12;

/// A read-only buffer for the bad-buffer checks.
static READ_ONLY: EnvState = EnvState::new();

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("state");
    let me = oxok_libos::process::env_id();
    self_replace(&mut t);
    let Ok([child, cid]) = sys::env_create() else {
        println!("state: FAIL env_create");
        return 1;
    };
    let row = exposed::env_entry(cid);
    t.expect(
        row.map(|r| (r.status, u64::from(r.parent), r.frames)),
        Some((ENV_CREATED, me, 0)),
        "new env in the table",
    );
    let Some(code) = code_frame(&mut t) else {
        return t.finish();
    };
    build_space(&mut t, child, code);
    let state = child_state();
    t.expect(sys::env_set_state(child, &raw const state as u64), Ok([]), "set the child's state");
    let back = get(child);
    t.expect(back.map(|s| s.regs), Some(state.regs), "state reads back identical");
    t.expect(back.map(|s| s.upcalls), Some(state.upcalls), "upcalls read back identical");
    forced_flags(&mut t, child, &state);
    hostile(&mut t, child, code, &state);
    let twin = copy_into_fresh(&mut t, child, code);
    // The verdict comes before the children are made runnable, so that it
    // precedes their output whatever the scheduler does; a failure from
    // here on prints a FAIL line and changes the exit status.
    let status = t.finish();
    if status != 0 {
        return status;
    }
    let mut ok = run(child, cid, &state);
    let mut ids = [cid, cid];
    if let Some((slot, id)) = twin {
        ok &= run(slot, id, &state);
        ids[1] = id;
    }
    // The second part starts once the first children are done, so the
    // output keeps its order.
    for id in ids {
        wait_end(id);
    }
    ok &= extended();
    if ok { 0 } else { 1 }
}

/// Yields until environment `id` has ended.
fn wait_end(id: u64) {
    for _ in 0..100_000 {
        if exposed::env_entry(id).is_none_or(|r| r.status == oxok_libos::abi::ENV_ZOMBIE) {
            return;
        }
        let _ = sys::yield_cpu(0);
    }
}

const XMM0: u64 = 0x1122_3344_5566_7788;
const FS_MARK: u64 = 0x0000_0000_5eed_f500;
const GS_MARK: u64 = 0x0000_0000_5eed_6500;
const MXCSR: u32 = 0x7f80;
/// Where the parent writes the second child's stack markers.
const SCRATCH2: u64 = SCRATCH + 0x10_0000;

/// The second part: FPU, bases and predicates round-trip into a fresh
/// environment, which then behaves the same.
fn extended() -> bool {
    let mut t = Checks::new("state-fpu");
    let Some(code) = code_frame_of(&mut t, child::fpu_code()) else {
        return t.finish() == 0;
    };
    let Ok([a, aid]) = sys::env_create() else {
        t.check(false, "create the fpu child");
        return t.finish() == 0;
    };
    marked_space(&mut t, a, code);
    let st = fpu_state();
    t.expect(sys::env_set_state(a, &raw const st as u64), Ok([]), "set the complete state");
    let back = get(a);
    t.expect(back.map(|s| s.version), Some(ENV_STATE_VERSION), "exported version");
    t.expect(back.map(|s| s.fpu), Some(st.fpu), "FPU state reads back identical");
    t.expect(back.map(|s| (s.fs_base, s.gs_base)), Some((st.fs_base, st.gs_base)), "bases read back");
    t.expect(back.map(|s| s.preds), Some(st.preds), "predicates read back");
    t.expect(back.as_ref(), Some(&st), "the whole state reads back identical");
    let bad: &[(&str, Spoil)] = &[
        ("version 1", |s| s.version = 1),
        ("MXCSR reserved bit", |s| s.fpu.bytes[26] = 0x01),
        ("FS base at USER_TOP", |s| s.fs_base = USER_TOP),
        ("kernel GS base", |s| s.gs_base = 0xffff_8000_0000_0000),
        ("predicate that does not verify", |s| s.preds[1].len = 3),
        ("predicate longer than allowed", |s| s.preds[0].len = 1 << 20),
        ("serving flag 2", |s| s.pct.serving = 2),
        ("served state with a kernel rip", |s| {
            s.pct.serving = 1;
            s.pct.saved.rip = 0xffff_ffff_8020_0000;
        }),
    ];
    for &(what, spoil) in bad {
        let mut b = st;
        spoil(&mut b);
        t.expect(sys::env_set_state(a, &raw const b as u64), Err(Error::Invalid), what);
    }
    t.expect(get(a).as_ref(), Some(&st), "refused imports changed nothing");
    let Ok([b, bid]) = sys::env_create() else {
        t.check(false, "create the fresh environment");
        return t.finish() == 0;
    };
    marked_space(&mut t, b, code);
    let Some(exported) = get(a) else {
        t.check(false, "export");
        return t.finish() == 0;
    };
    t.expect(sys::env_set_state(b, &raw const exported as u64), Ok([]), "import into a fresh environment");
    t.expect(get(b).as_ref(), Some(&exported), "the fresh environment's state is identical");
    if t.finish() != 0 {
        return false;
    }
    // One after the other, so their lines come in a fixed order.
    // What every libOS child gets before it runs (its console capability:
    // the children write their lines).
    oxok_libos::callcap::pass_on(a);
    oxok_libos::callcap::pass_on(b);
    let mut ran = sys::env_run(a).is_ok();
    wait_end(aid);
    ran &= sys::env_run(b).is_ok();
    wait_end(bid);
    ran && sleeper(code)
}

/// A sleeper's state: exported, it says "about to call env_sleep"; a new
/// state ends the sleep, whatever mask its registers name (here the same
/// one, with the predicate now true through the imported parameter).
fn sleeper(code: u64) -> bool {
    let mut t = Checks::new("state-sleeper");
    let Ok([s, sid]) = sys::env_create() else {
        t.check(false, "create the sleeper");
        return t.finish() == 0;
    };
    marked_space(&mut t, s, code);
    let mut st = fpu_state();
    st.preds[0].params[0] = 0;
    t.expect(sys::env_set_state(s, &raw const st as u64), Ok([]), "set a state that will sleep");
    // Its console capability (it writes its line when it wakes).
    oxok_libos::callcap::pass_on(s);
    t.expect(sys::env_run(s), Ok([]), "run it");
    for _ in 0..100_000 {
        if exposed::env_entry(sid).is_none_or(|r| r.status == ENV_SLEEPING) {
            break;
        }
        let _ = sys::yield_cpu(0);
    }
    t.expect(exposed::env_entry(sid).map(|r| r.status), Some(ENV_SLEEPING), "it sleeps");
    let asleep = get(s);
    t.expect(
        asleep.map(|a| (a.regs.rax, a.regs.rdi, a.regs.rip)),
        Some((Call::env_sleep.number(), 1, CHILD_CODE)),
        "a sleeper exports its env_sleep call, on the syscall",
    );
    t.expect(asleep.map(|a| a.preds[0].params[0]), Some(0), "… and its predicate's parameter");
    st.preds[0].params[0] = 7;
    t.expect(sys::env_set_state(s, &raw const st as u64), Ok([]), "replace the sleeper's state");
    t.check(exposed::env_entry(sid).is_some_and(|r| r.status != ENV_SLEEPING), "the sleep ended");
    let status = t.finish();
    wait_end(sid);
    status == 0
}

/// The second child's complete state.
fn fpu_state() -> EnvState {
    let mut st = EnvState::new();
    st.regs.rip = CHILD_CODE;
    st.regs.rsp = CHILD_STACK + PAGE_SIZE;
    st.regs.rflags = FLAGS_IF | FLAGS_RESERVED;
    st.regs.rbx = 0;
    st.regs.rax = Call::env_sleep.number();
    st.regs.rdi = 1;
    st.fs_base = CHILD_STACK;
    st.gs_base = CHILD_STACK + 8;
    let mut fpu = FpuState::CLEAN;
    fpu.bytes[24..28].copy_from_slice(&MXCSR.to_le_bytes());
    fpu.bytes[160..168].copy_from_slice(&XMM0.to_le_bytes());
    st.fpu = fpu;
    // Holds when parameter 0 is 7.
    let mut b = oxok_pred::Builder::new();
    b.load_param(0).eq_imm(7);
    if let Ok(code) = b.build() {
        let bytes = code.as_bytes();
        st.preds[0].len = bytes.len() as u64;
        st.preds[0].code[..bytes.len()].copy_from_slice(bytes);
        st.preds[0].params[0] = 7;
        // Slot 1 holds the same program; spoiled by the hostile checks.
        st.preds[1] = st.preds[0];
    }
    st
}

/// Maps the code and a stack page holding the FS and GS markers.
fn marked_space(t: &mut Checks, env: u64, code: u64) {
    t.expect(sys::page_map(env, code, CHILD_CODE, 0), Ok([]), "map the code into the child");
    let Ok([stack, _]) = sys::frame_alloc(ANY_FRAME) else {
        t.check(false, "frame for the stack");
        return;
    };
    t.expect(sys::page_map(0, stack, SCRATCH2, pte::WRITABLE | pte::NO_EXECUTE), Ok([]), "map the stack here");
    oxok_tests::mem::write(SCRATCH2, FS_MARK);
    oxok_tests::mem::write(SCRATCH2 + 8, GS_MARK);
    t.expect(sys::page_unmap(0, SCRATCH2), Ok([]), "unmap it here");
    t.expect(
        sys::page_map(env, stack, CHILD_STACK, pte::WRITABLE | pte::NO_EXECUTE),
        Ok([]),
        "map the stack into the child",
    );
    t.expect(sys::cap_drop(stack), Ok([]), "drop the stack capability");
}

/// Makes a child runnable; checks the table and that its state stayed.
fn run(slot: u64, id: u64, state: &EnvState) -> bool {
    // What every libOS child gets before it runs (the console capability
    // among it: the child writes its line).
    oxok_libos::callcap::pass_on(slot);
    let ran = sys::env_run(slot);
    let runs_before = exposed::env_entry(id).map(|r| r.runs);
    let status = exposed::env_entry(id).map(|r| r.status);
    let regs = get(slot).map(|s| s.regs);
    let runs_after = exposed::env_entry(id).map(|r| r.runs);
    // With preemption the child may already have run (its registers then
    // moved on) or exited (its row is then empty) by now; the scenario
    // checks the child's own output. Only a child that has not run yet
    // must show exactly the state it was given.
    let ended = status.is_none() || status == Some(oxok_libos::abi::ENV_ZOMBIE);
    let not_run_yet = runs_before == Some(0) && runs_after == Some(0);
    let kept = regs == Some(state.regs) || !not_run_yet;
    let ok = ran.is_ok() && (ended || (status == Some(ENV_RUNNABLE) && kept));
    if !ok {
        println!("state: FAIL env_run {ran:?}, table status {status:?}, state kept {}", regs == Some(state.regs));
    }
    ok
}

/// Reads an environment's state.
fn get(slot: u64) -> Option<EnvState> {
    let mut st = EnvState::default();
    sys::env_get_state(slot, &raw mut st as u64).ok().map(|_| st)
}

/// The child's initial registers: distinctive everywhere.
fn child_state() -> EnvState {
    EnvState {
        regs: Regs {
            rax: 0xaaaa_0000_0000_0001,
            rbx: EXIT,
            rcx: 0xcccc_0000_0000_0003,
            rdx: 0xdddd_0000_0000_0004,
            rsi: 0x5151_0000_0000_0005,
            rdi: 0xd1d1_0000_0000_0006,
            rbp: 0xbbbb_0000_0000_0007,
            rsp: CHILD_STACK + PAGE_SIZE,
            r8: 0x0808_0000_0000_0008,
            r9: 0x0909_0000_0000_0009,
            r10: 0x1010_0000_0000_0010,
            r11: 0x1111_0000_0000_0011,
            r12: R12,
            r13: 0x1313_0000_0000_0013,
            r14: 0x1414_0000_0000_0014,
            r15: R15,
            rip: CHILD_CODE,
            rflags: FLAGS_IF | FLAGS_RESERVED,
        },
        upcalls: [0; upcall::KINDS],
        ..EnvState::new()
    }
}

/// A frame holding the child's code, written through a scratch mapping.
fn code_frame(t: &mut Checks) -> Option<u64> {
    code_frame_of(t, child::code())
}

/// A frame holding `code`, written through a scratch mapping.
fn code_frame_of(t: &mut Checks, code: &[u8]) -> Option<u64> {
    let Ok([slot, _]) = sys::frame_alloc(ANY_FRAME) else {
        t.check(false, "frame for the code");
        return None;
    };
    let mapped = sys::page_map(0, slot, SCRATCH, pte::WRITABLE | pte::NO_EXECUTE);
    t.expect(mapped, Ok([]), "map the code frame in the parent");
    if mapped.is_err() {
        return None;
    }
    t.check(code.len() < PAGE_SIZE as usize && !code.is_empty(), "child code fits a page");
    child::copy_to(SCRATCH, code);
    t.expect(sys::page_unmap(0, SCRATCH), Ok([]), "unmap it from the parent");
    Some(slot)
}

/// Maps the code (read, execute) and a fresh stack frame into the child.
fn build_space(t: &mut Checks, env: u64, code: u64) {
    t.expect(sys::page_map(env, code, CHILD_CODE, 0), Ok([]), "map the code into the child");
    let Ok([stack, _]) = sys::frame_alloc(ANY_FRAME) else {
        t.check(false, "frame for the stack");
        return;
    };
    t.expect(
        sys::page_map(env, stack, CHILD_STACK, pte::WRITABLE | pte::NO_EXECUTE),
        Ok([]),
        "map the stack into the child",
    );
    // The parent keeps no mapping; dropping its capability leaves the frame
    // owned by the parent and mapped by the child.
    t.expect(sys::cap_drop(stack), Ok([]), "drop the stack capability");
}

/// Privileged flags are forced to user values; arithmetic flags are kept.
fn forced_flags(t: &mut Checks, env: u64, good: &EnvState) {
    let mut st = *good;
    st.regs.rflags = FLAGS_IOPL3 | FLAGS_CF | FLAGS_RESERVED;
    t.expect(sys::env_set_state(env, &raw const st as u64), Ok([]), "set state with IOPL 3, IF clear");
    let flags = get(env).map_or(0, |s| s.regs.rflags);
    t.expect(flags & FLAGS_IOPL3, 0, "IOPL forced to 0");
    t.expect(flags & FLAGS_IF, FLAGS_IF, "IF forced on");
    t.expect(flags & FLAGS_CF, FLAGS_CF, "carry flag kept");
    t.expect(sys::env_set_state(env, good as *const EnvState as u64), Ok([]), "restore the good state");
}

/// Makes a good state bad in one way.
type Spoil = fn(&mut EnvState);

/// Every way to misuse the state calls.
fn hostile(t: &mut Checks, env: u64, frame: u64, good: &EnvState) {
    let good_ptr = good as *const EnvState as u64;
    let mut buf = EnvState::default();
    let buf_ptr = &raw mut buf as u64;
    let empty = (1..64).rev().find(|&s| sys::cap_info(s) == Err(Error::BadCap)).unwrap_or(63);
    for (slot, what) in [(empty, "empty slot"), (u64::MAX, "slot u64::MAX"), (frame, "a frame capability")] {
        t.expect(sys::env_get_state(slot, buf_ptr), Err(Error::BadCap), what);
        t.expect(sys::env_set_state(slot, good_ptr), Err(Error::BadCap), what);
    }
    match sys::cap_grant(env, 0, rights::READ) {
        Ok([ro]) => {
            t.expect(sys::env_get_state(ro, buf_ptr), Ok([]), "get state with a read-only cap");
            t.expect(buf.regs, good.regs, "read-only cap reads the state");
            t.expect(sys::env_set_state(ro, good_ptr), Err(Error::Denied), "set state with a read-only cap");
            t.expect(
                sys::upcall_register(ro, upcall::EXCEPTION, CHILD_CODE),
                Err(Error::Denied),
                "upcall_register with a read-only cap",
            );
            t.expect(
                sys::page_map(ro, frame, CHILD_CODE + PAGE_SIZE, 0),
                Err(Error::Denied),
                "page_map with a read-only cap",
            );
            t.expect(sys::env_run(ro), Err(Error::Denied), "env_run with a read-only cap");
            t.expect(sys::env_destroy(ro), Err(Error::Denied), "env_destroy with a read-only cap");
            let _ = sys::cap_drop(ro);
        }
        Err(_) => t.check(false, "read-only copy of the child's capability"),
    }
    // A capability without read cannot even look.
    if let Ok([wo]) = sys::cap_grant(env, 0, rights::WRITE) {
        t.expect(sys::env_get_state(wo, buf_ptr), Err(Error::Denied), "get state without read");
        let _ = sys::cap_drop(wo);
    }
    let bad_regs: &[(&str, Spoil)] = &[
        ("kernel rip", |s| s.regs.rip = 0xffff_ffff_8020_0000),
        ("rip at USER_TOP", |s| s.regs.rip = USER_TOP),
        ("non-canonical rip", |s| s.regs.rip = 0x0000_8000_0000_0000),
        ("kernel rsp", |s| s.regs.rsp = 0xffff_8000_0001_0000),
        ("non-canonical rsp", |s| s.regs.rsp = 0x1234_5678_9abc_def0),
        ("kernel upcall entry", |s| s.upcalls[upcall::EXCEPTION as usize] = 0xffff_ffff_8020_0000),
        ("kernel exception stack", |s| s.upcalls[upcall::EXCEPTION_STACK as usize] = 0xffff_8000_0000_0000),
    ];
    for &(what, spoil) in bad_regs {
        let mut st = *good;
        spoil(&mut st);
        t.expect(sys::env_set_state(env, &raw const st as u64), Err(Error::Invalid), what);
    }
    t.expect(get(env), Some(*good), "refused states changed nothing");
    for (ptr, what) in [
        (0xffff_ffff_8020_0000u64, "get state into the kernel"),
        (0, "get state into null"),
        (&raw const READ_ONLY as u64, "get state into read-only memory"),
        (USER_TOP - 8, "get state across USER_TOP"),
    ] {
        t.expect(sys::env_get_state(env, ptr), Err(Error::BadAddress), what);
    }
    for (ptr, what) in [
        (0xffff_ffff_8020_0000u64, "set state from the kernel"),
        (0x3000_0000_0000, "set state from unmapped memory"),
        (u64::MAX - 16, "set state from a wrapping address"),
    ] {
        t.expect(sys::env_set_state(env, ptr), Err(Error::BadAddress), what);
    }
    t.expect(get(env), Some(*good), "bad buffers changed nothing");
}

/// Copies the child's state into a fresh environment with the same code
/// and its own stack (run too, after the child: it must behave the same).
fn copy_into_fresh(t: &mut Checks, from: u64, code: u64) -> Option<(u64, u64)> {
    let Ok([twin, id]) = sys::env_create() else {
        t.check(false, "create the twin");
        return None;
    };
    build_space(t, twin, code);
    let Some(st) = get(from) else {
        t.check(false, "get the state to copy");
        return None;
    };
    t.expect(sys::env_set_state(twin, &raw const st as u64), Ok([]), "set the twin's state");
    t.expect(get(twin), Some(st), "twin state identical");
    Some((twin, id))
}

/// The caller replaces its own state: it resumes from the new registers.
fn self_replace(t: &mut Checks) {
    let Some(mut st) = get(0) else {
        t.check(false, "get own state");
        return;
    };
    let (rax, rdi) = child::set_own_state(&mut st);
    t.expect((rax, rdi), (0x5e1f, 0x7777), "resumed from the replaced state");
}

/// The child's machine code and the asm that touches raw memory.
#[allow(unsafe_code)]
mod child {
    use core::arch::{asm, global_asm};
    use core::mem::offset_of;
    use oxok_libos::abi::{Call, EnvState, Regs};

    // Position-independent: writes "state-child: r12=0x… r15=0x…\n" on its
    // stack from r12 and r15, console_write()s it, exits with status bl.
    global_asm!(
        ".pushsection .rodata.oxok_state_child, \"a\"",
        ".balign 16",
        ".global oxok_state_child_start",
        "oxok_state_child_start:",
        "sub rsp, 128",
        "mov rdi, rsp",
        "lea rsi, [rip + oxok_state_child_p1]",
        "call oxok_state_child_copyz",
        "mov rax, r12",
        "call oxok_state_child_hex16",
        "lea rsi, [rip + oxok_state_child_p2]",
        "call oxok_state_child_copyz",
        "mov rax, r15",
        "call oxok_state_child_hex16",
        "mov byte ptr [rdi], 10",
        "inc rdi",
        "mov rsi, rdi",
        "sub rsi, rsp",
        "mov rdi, rsp",
        "mov eax, {write}",
        "syscall",
        "movzx edi, bl",
        "mov eax, {exit}",
        "syscall",
        "ud2",
        "oxok_state_child_copyz:",
        "mov al, [rsi]",
        "test al, al",
        "jz oxok_state_child_copyz_done",
        "mov [rdi], al",
        "inc rsi",
        "inc rdi",
        "jmp oxok_state_child_copyz",
        "oxok_state_child_copyz_done:",
        "ret",
        "oxok_state_child_hex16:",
        "mov ecx, 16",
        "oxok_state_child_hex_next:",
        "rol rax, 4",
        "mov edx, eax",
        "and edx, 15",
        "lea r8, [rip + oxok_state_child_digits]",
        "mov dl, [r8 + rdx]",
        "mov [rdi], dl",
        "inc rdi",
        "dec ecx",
        "jnz oxok_state_child_hex_next",
        "ret",
        "oxok_state_child_p1: .asciz \"state-child: r12=0x\"",
        "oxok_state_child_p2: .asciz \" r15=0x\"",
        "oxok_state_child_digits: .ascii \"0123456789abcdef\"",
        ".global oxok_state_child_end",
        "oxok_state_child_end:",
        ".popsection",
        write = const Call::console_write.number(),
        exit = const Call::env_exit.number(),
    );

    // Position-independent: runs the `syscall` its registers name (an
    // `env_sleep`), then writes "state-fpu: sleep=0x… xmm0=0x… fs0=0x…
    // gs0=0x… mxcsr=0x…\n" from the call's status, xmm0, %fs:0, %gs:0 and
    // MXCSR, console_write()s it and exits with status bl.
    global_asm!(
        ".pushsection .rodata.oxok_state_fpu, \"a\"",
        ".balign 16",
        ".global oxok_state_fpu_start",
        "oxok_state_fpu_start:",
        "syscall",
        "mov r12, rax",
        "sub rsp, 160",
        "mov rdi, rsp",
        "lea rsi, [rip + oxok_state_fpu_p0]",
        "call oxok_state_fpu_copyz",
        "mov rax, r12",
        "call oxok_state_fpu_hex16",
        "lea rsi, [rip + oxok_state_fpu_p1]",
        "call oxok_state_fpu_copyz",
        "movq rax, xmm0",
        "call oxok_state_fpu_hex16",
        "lea rsi, [rip + oxok_state_fpu_p2]",
        "call oxok_state_fpu_copyz",
        "mov rax, qword ptr fs:[0]",
        "call oxok_state_fpu_hex16",
        "lea rsi, [rip + oxok_state_fpu_p3]",
        "call oxok_state_fpu_copyz",
        "mov rax, qword ptr gs:[0]",
        "call oxok_state_fpu_hex16",
        "lea rsi, [rip + oxok_state_fpu_p4]",
        "call oxok_state_fpu_copyz",
        "stmxcsr [rsp - 8]",
        "mov eax, [rsp - 8]",
        "call oxok_state_fpu_hex16",
        "mov byte ptr [rdi], 10",
        "inc rdi",
        "mov rsi, rdi",
        "sub rsi, rsp",
        "mov rdi, rsp",
        "mov eax, {write}",
        "syscall",
        "movzx edi, bl",
        "mov eax, {exit}",
        "syscall",
        "ud2",
        "oxok_state_fpu_copyz:",
        "mov al, [rsi]",
        "test al, al",
        "jz oxok_state_fpu_copyz_done",
        "mov [rdi], al",
        "inc rsi",
        "inc rdi",
        "jmp oxok_state_fpu_copyz",
        "oxok_state_fpu_copyz_done:",
        "ret",
        "oxok_state_fpu_hex16:",
        "mov ecx, 16",
        "oxok_state_fpu_hex_next:",
        "rol rax, 4",
        "mov edx, eax",
        "and edx, 15",
        "lea r8, [rip + oxok_state_fpu_digits]",
        "mov dl, [r8 + rdx]",
        "mov [rdi], dl",
        "inc rdi",
        "dec ecx",
        "jnz oxok_state_fpu_hex_next",
        "ret",
        "oxok_state_fpu_p0: .asciz \"state-fpu: sleep=0x\"",
        "oxok_state_fpu_p1: .asciz \" xmm0=0x\"",
        "oxok_state_fpu_p2: .asciz \" fs0=0x\"",
        "oxok_state_fpu_p3: .asciz \" gs0=0x\"",
        "oxok_state_fpu_p4: .asciz \" mxcsr=0x\"",
        "oxok_state_fpu_digits: .ascii \"0123456789abcdef\"",
        ".global oxok_state_fpu_end",
        "oxok_state_fpu_end:",
        ".popsection",
        write = const Call::console_write.number(),
        exit = const Call::env_exit.number(),
    );

    unsafe extern "C" {
        static oxok_state_child_start: u8;
        static oxok_state_child_end: u8;
        static oxok_state_fpu_start: u8;
        static oxok_state_fpu_end: u8;
    }

    /// The second routine's bytes.
    pub fn fpu_code() -> &'static [u8] {
        let start = &raw const oxok_state_fpu_start;
        let end = &raw const oxok_state_fpu_end;
        // SAFETY: both symbols delimit one assembled block in .rodata.
        unsafe { core::slice::from_raw_parts(start, end as usize - start as usize) }
    }

    /// The routine's bytes.
    pub fn code() -> &'static [u8] {
        let start = &raw const oxok_state_child_start;
        let end = &raw const oxok_state_child_end;
        // SAFETY: both symbols delimit one assembled block in .rodata.
        unsafe { core::slice::from_raw_parts(start, end as usize - start as usize) }
    }

    /// Copies `bytes` to `va`, a page the caller mapped writable for this.
    pub fn copy_to(va: u64, bytes: &[u8]) {
        for (i, &b) in bytes.iter().enumerate() {
            // SAFETY: `va` is a scratch page the caller mapped writable and
            // `bytes` fits it (checked by the caller).
            unsafe { core::ptr::write_volatile((va as *mut u8).add(i), b) }
        }
    }

    const fn reg(off: usize) -> usize {
        offset_of!(EnvState, regs) + off
    }

    /// Replaces the caller's own state with `st` patched to resume right
    /// after the call with rax = 0x5e1f and rdi = 0x7777 and every
    /// callee-saved register as it is. Returns (rax, rdi) as resumed.
    pub fn set_own_state(st: &mut EnvState) -> (u64, u64) {
        let (rax, rdi): (u64, u64);
        // The new state keeps rsp, rbx, rbp and r12–r15 and resumes at label 2
        // with the caller-saved registers env_get_state captured.
        // SAFETY: exactly the outputs and clobbers declared here change.
        unsafe {
            asm!(
                "lea rax, [rip + 2f]",
                "mov [rsi + {rip}], rax",
                "mov [rsi + {rsp}], rsp",
                "mov [rsi + {rbx}], rbx",
                "mov [rsi + {rbp}], rbp",
                "mov [rsi + {r12}], r12",
                "mov [rsi + {r13}], r13",
                "mov [rsi + {r14}], r14",
                "mov [rsi + {r15}], r15",
                "mov qword ptr [rsi + {rax}], 0x5e1f",
                "mov qword ptr [rsi + {rdi}], 0x7777",
                "xor edi, edi",
                "mov eax, {nr}",
                "syscall",
                "2:",
                rip = const reg(offset_of!(Regs, rip)),
                rsp = const reg(offset_of!(Regs, rsp)),
                rbx = const reg(offset_of!(Regs, rbx)),
                rbp = const reg(offset_of!(Regs, rbp)),
                r12 = const reg(offset_of!(Regs, r12)),
                r13 = const reg(offset_of!(Regs, r13)),
                r14 = const reg(offset_of!(Regs, r14)),
                r15 = const reg(offset_of!(Regs, r15)),
                rax = const reg(offset_of!(Regs, rax)),
                rdi = const reg(offset_of!(Regs, rdi)),
                nr = const Call::env_set_state.number(),
                inout("rsi") st as *mut EnvState => _,
                out("rax") rax,
                out("rdi") rdi,
                out("rcx") _,
                out("rdx") _,
                out("r8") _,
                out("r9") _,
                out("r10") _,
                out("r11") _,
            );
        }
        (rax, rdi)
    }
}
