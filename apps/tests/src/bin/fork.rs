//! fork and the libOS's virtual memory: copy-on-write isolation (parent
//! and child each see only their own writes, in static data, the heap, the
//! stack and a demand-zero region), nested forks, write faults that copy
//! versus re-enable write, 64 forked children reaped with the frame count
//! back at its baseline, the Appel–Li trap primitive, and a fault in a
//! protected control transfer's handler that interrupted an exception
//! handler (the handler's stack must survive it).
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::pct::{self, Msg};
use oxok_libos::upcall::{self, Kind, Outcome, VECTOR_BREAKPOINT};
use oxok_libos::vm::{self, Fork, Prot, appel};
use oxok_libos::{Args, exposed, fd, fs, println};
use oxok_tests::Checks;

oxok_libos::main!(main);

/// Static data: a page of its own, written by both sides after the fork.
#[repr(align(4096))]
struct Page([AtomicU64; 512]);
static DATA: Page = Page([const { AtomicU64::new(0) }; 512]);
static TRAPS: AtomicU64 = AtomicU64::new(0);

fn get(i: usize) -> u64 {
    DATA.0[i].load(Ordering::Relaxed)
}

fn set(i: usize, v: u64) {
    DATA.0[i].store(v, Ordering::Relaxed);
}

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("fork");
    t.check(vm::init().is_ok(), "VM fault handler installed");
    isolation(&mut t);
    demand_zero(&mut t);
    nested(&mut t);
    big(&mut t);
    descriptors(&mut t);
    many(&mut t);
    trap(&mut t);
    transfer_over_handler(&mut t);
    t.finish()
}

/// Each side writes static data, the heap, its stack and a region after
/// the fork and must see only its own writes; the child reports by its exit
/// code which checks failed.
fn isolation(t: &mut Checks) {
    set(0, 1);
    set(511, 2);
    let mut heap: Vec<u64> = (0..2048).collect();
    let mut stack = [7u64; 64];
    let region = vm::map_anon(4 * 4096, Prot::READ_WRITE).unwrap_or(0);
    t.check(region != 0, "a demand-zero region");
    write_region(region, 11);
    match vm::fork() {
        Ok(Fork::Child) => {
            let mut bad = 0;
            // Before writing: the parent's pre-fork values.
            bad |= u8::from(get(0) != 1 || get(511) != 2);
            bad |= u8::from(heap[2047] != 2047) << 1;
            bad |= u8::from(stack[63] != 7) << 2;
            bad |= u8::from(read_region(region) != 11) << 3;
            set(0, 100);
            heap[2047] = 100;
            stack[63] = 100;
            write_region(region, 100);
            for _ in 0..20 {
                let _ = oxok_libos::sys::yield_cpu(0);
            }
            // After the parent wrote its own values meanwhile.
            bad |= u8::from(get(0) != 100 || get(511) != 2) << 4;
            bad |= u8::from(heap[2047] != 100 || heap[0] != 0) << 5;
            bad |= u8::from(stack[63] != 100) << 6;
            bad |= u8::from(read_region(region) != 100) << 7;
            oxok_libos::process::exit(i32::from(bad))
        }
        Ok(Fork::Parent(child)) => {
            set(0, 200);
            heap[2047] = 200;
            stack[63] = 200;
            write_region(region, 200);
            let status = exec::wait(child);
            t.expect(status, Ok(ExitStatus::Exited(0)), "child saw only its own writes (bit mask of failures)");
            t.check(get(0) == 200 && get(511) == 2, "parent's static data is its own");
            t.check(heap[2047] == 200 && heap[1] == 1, "parent's heap is its own");
            t.check(core::hint::black_box(&stack)[63] == 200, "parent's stack is its own");
            t.check(read_region(region) == 200, "parent's region is its own");
        }
        Err(e) => t.check(false, &alloc::format!("fork failed: {e}")),
    }
    let _ = vm::unmap(region, 4 * 4096);
}

fn write_region(region: u64, v: u64) {
    for p in 0..4 {
        oxok_tests::mem::store(region + p * 4096 + 8 * p, v);
    }
}

fn read_region(region: u64) -> u64 {
    let v = oxok_tests::mem::load(region);
    if (1..4).all(|p| oxok_tests::mem::load(region + p * 4096 + 8 * p) == v) { v } else { u64::MAX }
}

/// Pages of a region appear zeroed on first touch and go back on unmap.
fn demand_zero(t: &mut Checks) {
    let len = 32 * 4096;
    let Ok(r) = vm::map_anon(len, Prot::READ_WRITE) else {
        t.check(false, "map_anon");
        return;
    };
    t.check(exposed::pte(r).is_none(), "nothing mapped before the first touch");
    let zero = (0..32).all(|p| oxok_tests::mem::load(r + p * 4096 + 16) == 0);
    t.check(zero, "demand-zero pages read as zero");
    oxok_tests::mem::store(r + 5 * 4096, 77);
    t.expect(oxok_tests::mem::load(r + 5 * 4096), 77, "written value reads back");
    let me = exposed::self_id();
    let frames: alloc::vec::Vec<u64> = (0..32).filter_map(|p| exposed::frame_of(r + p * 4096)).collect();
    let mine = |pfn: &u64| exposed::frame_entry(*pfn).is_some_and(|f| u64::from(f.owner) == me);
    t.expect(frames.len(), 32, "32 pages mapped after touching them");
    t.check(frames.iter().all(mine), "each with a frame of this process");
    t.check(vm::protect(r, len, Prot::READ).is_ok(), "protect the region read-only");
    t.check(!exposed::writable(r + 5 * 4096), "read-only now");
    t.check(vm::protect(r, len, Prot::READ_WRITE).is_ok(), "and writable again (own capability)");
    t.check(exposed::writable(r + 5 * 4096), "writable again");
    t.check(vm::unmap(r, len).is_ok(), "unmap the region");
    t.check(!frames.iter().any(mine), "its frames went back to the kernel on unmap");
    t.check(vm::unmap(r, len).is_err(), "unmapping twice is refused");
}

/// A child forks a grandchild; all three keep their own copies.
fn nested(t: &mut Checks) {
    set(1, 1);
    match vm::fork() {
        Ok(Fork::Child) => {
            set(1, 2);
            let code = match vm::fork() {
                Ok(Fork::Child) => {
                    let ok = get(1) == 2;
                    set(1, 3);
                    oxok_libos::process::exit(if ok { 30 } else { 31 })
                }
                Ok(Fork::Parent(c)) => match exec::wait(c) {
                    Ok(ExitStatus::Exited(30)) if get(1) == 2 => 20,
                    _ => 21,
                },
                Err(_) => 22,
            };
            oxok_libos::process::exit(code)
        }
        Ok(Fork::Parent(c)) => {
            t.expect(exec::wait(c), Ok(ExitStatus::Exited(20)), "child and grandchild each saw their own copy");
            t.expect(get(1), 1, "the parent's copy is untouched");
        }
        Err(e) => t.check(false, &alloc::format!("fork failed: {e}")),
    }
}

/// A 4 MiB region, every page written, forked: the child writes some of
/// it and exits 0.
fn big(t: &mut Checks) {
    let len = 4 << 20;
    let Ok(r) = vm::map_anon(len, Prot::READ_WRITE) else {
        t.check(false, "map_anon 4 MiB");
        return;
    };
    for p in 0..len / 4096 {
        oxok_tests::mem::store(r + p * 4096, p);
    }
    match vm::fork() {
        Ok(Fork::Child) => {
            let ok = (0..len / 4096).all(|p| oxok_tests::mem::load(r + p * 4096) == p);
            for p in (0..len / 4096).step_by(7) {
                oxok_tests::mem::store(r + p * 4096, 0);
            }
            oxok_libos::process::exit(if ok { 0 } else { 1 })
        }
        Ok(Fork::Parent(c)) => {
            t.expect(exec::wait(c), Ok(ExitStatus::Exited(0)), "child of a 4 MiB process saw every page");
            t.check((0..len / 4096).all(|p| oxok_tests::mem::load(r + p * 4096) == p), "parent's 4 MiB untouched");
        }
        Err(e) => t.check(false, &alloc::format!("fork of a 4 MiB process failed: {e}")),
    }
    t.check(vm::unmap(r, len).is_ok(), "unmap 4 MiB");
}

/// A fork child inherits an open file and a pipe: it writes to both; the
/// parent reads the pipe and then the file, which has both writes.
fn descriptors(t: &mut Checks) {
    let Ok(server) = fs::spawn_server() else {
        t.check(false, "file server started");
        return;
    };
    let flags = fs::OpenFlags::READ | fs::OpenFlags::WRITE | fs::OpenFlags::CREATE | fs::OpenFlags::APPEND;
    let file = fs::open("/forked", flags);
    let pipe = fd::pipe::pipe();
    t.check(file.is_ok() && pipe.is_ok(), "a file and a pipe open");
    let (Ok(file), Ok((r, w))) = (file, pipe) else { return };
    match vm::fork() {
        Ok(Fork::Child) => {
            drop(r);
            let a = fd::write_all(file, b"child;").is_ok();
            let b = w.write(b"through the pipe").is_ok();
            oxok_libos::process::exit(if a && b { 0 } else { 1 })
        }
        Ok(Fork::Parent(c)) => {
            drop(w);
            let mut got = Vec::new();
            let mut buf = [0u8; 64];
            while let Ok(n @ 1..) = r.read(&mut buf) {
                got.extend_from_slice(&buf[..n]);
            }
            t.expect(got.as_slice(), &b"through the pipe"[..], "the child's pipe write arrived, then end of file");
            t.expect(exec::wait(c), Ok(ExitStatus::Exited(0)), "the child wrote to the inherited file and pipe");
            t.check(fd::write_all(file, b"parent").is_ok(), "the parent's handle still works");
            let _ = fd::close(file);
            t.expect(fs::read_file("/forked").ok().as_deref(), Some(&b"child;parent"[..]), "the file has both writes");
        }
        Err(e) => t.check(false, &alloc::format!("fork failed: {e}")),
    }
    t.check(fs::stop_server(server).is_ok(), "file server stopped");
}

/// 64 forked children, each writing to its copy and exiting with a code:
/// every code comes back and the frame count returns to its baseline.
fn many(t: &mut Checks) {
    // Settle the parent's own copy-on-write pages first (a write after the
    // first fork makes the parent's pages private again).
    let _ = vm::fork().map(|f| match f {
        Fork::Child => oxok_libos::process::exit(0),
        Fork::Parent(c) => drop(exec::wait(c)),
    });
    set(2, 0);
    settle(); // let the kernel's reaper finish earlier children
    let before = (exposed::owned_frames(), exposed::free_frames());
    let mut ok = 0;
    for i in 0..64 {
        match vm::fork() {
            Ok(Fork::Child) => {
                set(2, i);
                oxok_libos::process::exit((get(2) % 100) as i32)
            }
            Ok(Fork::Parent(c)) => {
                if exec::wait(c) == Ok(ExitStatus::Exited((i % 100) as i32)) {
                    ok += 1;
                }
            }
            Err(e) => println!("fork: fork {i} failed: {e}"),
        }
    }
    t.expect(ok, 64, "64 forked children exited with their codes");
    settle(); // the kernel's reaper works in bounded steps
    set(2, 1);
    let after = (exposed::owned_frames(), exposed::free_frames());
    t.expect(after, before, "owned and free frames back at the baseline after 64 forks");
    let (copied, reused) = vm::cow_stats();
    t.check(reused > 0, "write faults after the children died re-enabled write without copying");
    println!("fork: copy-on-write faults: {copied} copied, {reused} re-enabled");
}

/// Gives the kernel's bounded-step reaper time to finish (it runs on
/// system calls and ticks): until the free-frame count stops changing.
fn settle() {
    let mut last = exposed::free_frames();
    for _ in 0..50 {
        for _ in 0..20 {
            let _ = oxok_libos::sys::yield_cpu(0);
        }
        oxok_tests::cpu::spin_ms(2);
        let now = exposed::free_frames();
        if now == last {
            return;
        }
        last = now;
    }
}

fn on_trap(page: u64) -> bool {
    TRAPS.fetch_add(1, Ordering::Relaxed);
    appel::unprot1(page).is_ok()
}

/// prot1 + a write: the trap handler unprotects, the write completes.
fn trap(t: &mut Checks) {
    let Ok(r) = vm::map_anon(8 * 4096, Prot::READ_WRITE) else {
        t.check(false, "map_anon for trap");
        return;
    };
    for p in 0..8 {
        oxok_tests::mem::store(r + p * 4096, p);
    }
    t.check((0..8).all(|p| appel::dirty(r + p * 4096)), "dirty bits set after writes");
    t.check(appel::set_trap(r, r + 8 * 4096, on_trap).is_ok(), "trap handler set");
    t.check(appel::prot_n(r, 8).is_ok(), "prot_n");
    t.check((0..8).all(|p| !exposed::writable(r + p * 4096)), "all read-only");
    oxok_tests::mem::store(r + 3 * 4096, 33);
    t.expect(TRAPS.load(Ordering::Relaxed), 1, "one trap");
    t.expect(oxok_tests::mem::load(r + 3 * 4096), 33, "the write completed after the trap");
    t.check(appel::unprot_n(r, 8).is_ok(), "unprot_n");
    t.check((0..8).all(|p| exposed::writable(r + p * 4096)), "all writable");
    appel::clear_trap();
    let _ = vm::unmap(r, 8 * 4096);
}

/// A page the child writes first inside a protected control transfer's
/// handler, so that write is a copy-on-write fault in that handler.
static TOUCH: Page = Page([const { AtomicU64::new(0) }; 512]);
/// In the child: its exception handler is running (and waiting).
static IN_HANDLER: AtomicU64 = AtomicU64::new(0);
/// In the child: the transfer's handler ran while the exception handler
/// waited.
static GOT: AtomicU64 = AtomicU64::new(0);

/// The child's exception handler: fills a stretch of its stack with known
/// words, waits for the parent's transfer (whose handler faults), then
/// checks its words and its frame. Exit status bits: 1 the transfer never
/// came, 2 the words changed, 4 the frame changed.
fn wait_in_handler(frame: &mut ExceptionFrame) -> Outcome {
    let words: [u64; 64] = core::array::from_fn(|i| 0x5ca1_ab1e_0000_0000 | i as u64);
    let words = core::hint::black_box(words);
    let (vector, rip) = (frame.vector, frame.regs.rip);
    IN_HANDLER.store(1, Ordering::Release);
    let mut spins = 0;
    while GOT.load(Ordering::Acquire) == 0 && spins < 200_000 {
        let _ = oxok_libos::sys::yield_cpu(0);
        spins += 1;
    }
    let mut bad = i32::from(GOT.load(Ordering::Acquire) == 0);
    let intact = core::hint::black_box(&words).iter().enumerate().all(|(i, w)| *w == 0x5ca1_ab1e_0000_0000 | i as u64);
    bad |= i32::from(!intact) << 1;
    bad |= i32::from(frame.vector != vector || vector != VECTOR_BREAKPOINT || frame.regs.rip != rip) << 2;
    if bad != 0 {
        oxok_libos::process::exit(bad);
    }
    Outcome::Resume
}

/// The child's transfer handler: once the exception handler waits, writes
/// `TOUCH` (its first write there: a copy-on-write fault, delivered while
/// the exception handler's frames are live on the exception stack) and
/// answers 1; before that it answers 0 and touches nothing.
fn touch_when_waiting(_caller: u64, _sync: bool, msg: &mut Msg) {
    *msg = [0; pct::WORDS];
    if IN_HANDLER.load(Ordering::Acquire) != 0 {
        TOUCH.0[0].store(1, Ordering::Relaxed);
        GOT.store(1, Ordering::Release);
        msg[0] = 1;
    }
}

/// A transfer that arrives while an exception handler runs (here: waits)
/// and whose handler faults: the kernel must put the fault's frame below
/// the waiting handler's stack, not at the exception stack's top over it.
/// The child is forked so that the transfer handler's first write to
/// `TOUCH` is a copy-on-write fault.
fn transfer_over_handler(t: &mut Checks) {
    TOUCH.0[0].store(7, Ordering::Relaxed);
    match vm::fork() {
        Ok(Fork::Child) => {
            upcall::set_handler(Kind::Exception, wait_in_handler);
            if pct::serve(touch_when_waiting).is_err() {
                oxok_libos::process::exit(8);
            }
            oxok_tests::mem::int3();
            oxok_libos::process::exit(if TOUCH.0[0].load(Ordering::Relaxed) == 1 { 0 } else { 16 })
        }
        Ok(Fork::Parent(child)) => {
            let mut answered = false;
            for _ in 0..20_000 {
                if let Ok((_, reply)) = pct::call(child.id, &[0; pct::WORDS])
                    && reply[0] == 1
                {
                    answered = true;
                    break;
                }
                let _ = oxok_libos::sys::yield_cpu(0);
            }
            t.check(answered, "the child's transfer handler ran while its exception handler waited");
            let status = exec::wait(child);
            t.expect(
                status,
                Ok(ExitStatus::Exited(0)),
                "a fault in a transfer's handler left the interrupted exception handler's stack and frame intact",
            );
            t.check(TOUCH.0[0].load(Ordering::Relaxed) == 7, "the child's write stayed its own");
        }
        Err(e) => t.check(false, &alloc::format!("fork failed: {e}")),
    }
}
