//! spawn: the libOS's exec. Starts `hello a b` from the boot archive and
//! waits for it; then 64 children in a row, waiting for each, and checks
//! that the caller's capability list, its own frames and (when it is the
//! only environment) the machine's free frames are back where they started;
//! then the refusals — a name not in the archive, images that are not ELF,
//! arguments that do not fit — and a spawn that runs out of capability slots
//! half-way, which must leave nothing behind; finally a child that crashes
//! (`hostile-jump call-kernel`): `wait` returns and the parent goes on.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::frames::OWNER_KERNEL;
use oxok_libos::abi::layout::{ENV_TABLE_ROWS, PROGRAM_BASE, pte};
use oxok_libos::abi::{CAP_SLOTS, Error, Mapping, rights};
use oxok_libos::exec::{self, ExitStatus, SpawnError, SpawnOptions};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

/// Children started in a row by the leak check.
const ROUNDS: usize = 64;

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("spawn");
    // The first spawn also builds the page tables of the scratch region in
    // this environment; they stay, so the baseline is taken after it.
    run(&mut t, "hello", &["hello", "a", "b"], "hello a b", ExitStatus::Exited(0));
    let before = Usage::now();

    for _ in 0..ROUNDS {
        if !run(&mut t, "hello", &["hello", "again"], "hello again", ExitStatus::Exited(0)) {
            break;
        }
    }
    println!("spawn: {ROUNDS} children started and waited for");
    before.check_same(&mut t, "after 64 children");

    refusals(&mut t);
    before.check_same(&mut t, "after the refusals");
    half_built(&mut t);
    before.check_same(&mut t, "after a spawn that failed half-way");

    // A page fault (vector 14) with no handler: reported as a kill.
    run(&mut t, "hostile-jump", &["hostile-jump", "call-kernel"], "a crashing child", ExitStatus::Killed(Some(14)));
    // A failing program's exit code comes through.
    run(&mut t, "upcalls", &["upcalls", "unhandled"], "SIGILL's default action", ExitStatus::Signalled(4));
    println!("spawn: the parent goes on after its child crashed");
    run(&mut t, "hello", &["hello", "after", "crash"], "hello after a crash", ExitStatus::Exited(0));
    text_from_archive(&mut t);
    before.check_same(&mut t, "at the end");
    rows_bounded(&mut t);
    t.finish()
}

/// Every row that holds an environment lies below the exposed count of
/// rows used (scans stop there: `exposed::env_rows`), this one's included.
fn rows_bounded(t: &mut Checks) {
    let used = exposed::sysinfo().map_or(0, |i| i.env_rows_used) as usize;
    let held = |i: usize| exposed::env_row(i).is_some_and(|r| r.id != 0);
    t.check((0..ENV_TABLE_ROWS).filter(|&i| held(i)).all(|i| i < used), "no environment beyond the rows used");
    let me = exposed::self_id();
    t.check(exposed::env_rows().any(|r| u64::from(r.id) == me), "this environment among the rows used");
    t.check(used > 1, "the rows the children used counted");
}

/// Spawns, checks the child is this environment's, waits (reaping it),
/// checks how it ended and that it is gone. False if the spawn failed.
fn run(t: &mut Checks, name: &str, argv: &[&str], what: &str, want: ExitStatus) -> bool {
    let me = exposed::self_id();
    let child = match exec::spawn(name, argv) {
        Ok(child) => child,
        Err(e) => {
            println!("spawn: FAIL spawn {what}: {e}");
            t.check(false, what);
            return false;
        }
    };
    // The child may already have run and ended (a timer tick), hence `none`.
    let row = exposed::env_entry(child.id);
    t.check(row.is_none_or(|r| u64::from(r.parent) == me), "the child's parent is the caller");
    let id = child.id;
    let slot = child.slot;
    let status = exec::wait(child);
    if status != Ok(want) {
        println!("spawn: FAIL {what}: ended {status:?}, expected {want:?}");
    }
    t.check(status == Ok(want), "wait reports how the child ended");
    t.check(exposed::env_entry(id).is_none(), "the child is gone after wait");
    t.check(sys::env_reap(slot).is_err(), "a reaped child cannot be reaped again");
    true
}

/// The refusals: nothing may be created.
fn refusals(t: &mut Checks) {
    t.check(exec::spawn("no-such-program", &["no-such-program"]) == Err(SpawnError::NotFound), "unknown name");
    t.check(exec::spawn("", &[]) == Err(SpawnError::NotFound), "empty name");
    let not_elf = exec::spawn_image(b"#!/bin/sh\necho not an executable\n", &["script"]);
    t.check(matches!(not_elf, Err(SpawnError::BadExecutable(_))), "not an ELF file");
    // Copies of hello cut short: in the program headers, and in the segments.
    for len in [200, 1024] {
        let cut =
            exec::program("hello").and_then(|hello| hello.get(..len)).map(|cut| exec::spawn_image(cut, &["hello"]));
        t.check(matches!(cut, Some(Err(SpawnError::BadExecutable(_)))), "a truncated ELF file");
    }
    // 500 pointers alone fill the stack's top page.
    let many = ["x"; 500];
    t.check(exec::spawn("hello", &many) == Err(SpawnError::BadArguments), "argv longer than a page");
    t.check(exec::spawn("hello", &["hello", "a\0b"]) == Err(SpawnError::BadArguments), "an argument with NUL");
}

/// Fills the capability list until only a few slots are free, so that the
/// spawn gets its environment and some frames and then runs out of slots:
/// it must fail with `NoMemory` and undo everything.
fn half_built(t: &mut Checks) {
    let mut fillers = [0u64; CAP_SLOTS];
    let mut n = 0;
    // Leave room for the child's environment capability and 2 frames.
    // (`hello`'s text and read-only data are the boot archive's pages,
    // mapped without a frame capability; its other pages need 5 in one
    // batch of the loader: the last partial pages of text and read-only
    // data, three of data.)
    while cap_count() < CAP_SLOTS - 3 {
        match sys::cap_grant(0, 0, rights::READ) {
            Ok([slot]) => {
                fillers[n] = slot;
                n += 1;
            }
            Err(e) => {
                println!("spawn: FAIL cannot fill the capability list: {e}");
                t.check(false, "fill the capability list");
                break;
            }
        }
    }
    let r = exec::spawn("hello", &["hello", "never", "runs"]);
    if let Ok(child) = &r {
        let _ = sys::env_destroy(child.slot);
    }
    t.check(r == Err(SpawnError::Kernel(Error::NoMemory)), "spawn without enough capability slots: NoMemory");
    for &slot in &fillers[..n] {
        t.check(sys::cap_drop(slot).is_ok(), "drop a filler capability");
    }
}

/// Occupied slots of the caller's capability list.
fn cap_count() -> usize {
    (0..CAP_SLOTS as u64).filter(|&slot| sys::cap_info(slot).is_ok()).count()
}

/// True if no environment but the caller is alive.
fn alone() -> bool {
    let me = exposed::self_id();
    (0..ENV_TABLE_ROWS).all(|i| exposed::env_row(i).is_none_or(|r| r.id == 0 || u64::from(r.id) == me))
}

/// What the caller holds, and the machine's free frames.
struct Usage {
    caps: usize,
    owned: Option<u32>,
    free: Option<u64>,
}

impl Usage {
    fn now() -> Usage {
        Usage { caps: cap_count(), owned: exposed::owned_frames(), free: exposed::free_frames() }
    }

    /// Checks the caller's counts are as in `self` and, if it is the only
    /// environment, that every frame came back. A dead child's frames are
    /// released in bounded steps, so give the kernel a few rounds first.
    fn check_same(&self, t: &mut Checks, when: &str) {
        let now = Usage::now();
        if now.caps != self.caps || now.owned != self.owned {
            println!(
                "spawn: FAIL {when}: caps {} -> {}, own frames {:?} -> {:?}",
                self.caps, now.caps, self.owned, now.owned
            );
        }
        t.check(now.caps == self.caps, "capability slots back where they started");
        t.check(now.owned == self.owned, "own frames back where they started");
        if !alone() {
            println!("spawn: other environments alive {when}; free-frame check skipped");
            return;
        }
        let mut free = now.free;
        for _ in 0..1000 {
            if free >= self.free {
                break;
            }
            let _ = sys::yield_cpu(0);
            free = exposed::free_frames();
        }
        if free != self.free {
            println!("spawn: FAIL {when}: free frames {:?} -> {free:?}", self.free);
        }
        t.check(free == self.free, "no frame leaked");
    }
}

/// A spawned program's text is the boot archive's own pages (the archive's
/// files start on page boundaries and `exec` maps a read-only segment's
/// whole pages from it), read-only: its first page maps the very frame that
/// holds that page of the archive, a kernel frame, not one of the child's.
fn text_from_archive(t: &mut Checks) {
    let Some(image) = exec::program("hello") else {
        t.check(false, "hello in the boot archive");
        return;
    };
    let Ok(child) = exec::spawn_with("hello", &["hello"], SpawnOptions::new().held(true)) else {
        t.check(false, "spawn hello held");
        return;
    };
    let mut maps = [Mapping::default(); 4];
    let listed = sys::env_mappings(child.slot, PROGRAM_BASE, maps.as_mut_ptr() as u64, maps.len() as u64);
    // hello's first segment (text) starts at file offset 0x1000 and at
    // PROGRAM_BASE (checked here, not assumed).
    let text = image.get(0x1000..).map(|rest| rest.as_ptr() as u64);
    let first = maps[0];
    t.check(listed.is_ok_and(|[n, _]| n > 0) && first.va == PROGRAM_BASE, "the child's first page listed");
    t.expect(text.and_then(exposed::frame_of), Some(first.frame), "its first page is the archive's own frame");
    t.expect(exposed::frame_entry(first.frame).map(|f| f.owner), Some(OWNER_KERNEL), "a kernel frame");
    t.check(first.flags & pte::WRITABLE == 0, "mapped read-only");
    listing_all_or_nothing(t, child.slot);
    t.check(sys::env_destroy(child.slot).is_ok(), "destroy the held child");
}

/// `env_mappings` into a buffer whose page ends three records in, the
/// next page unmapped: `BadAddress`, and nothing written (the three
/// records that fit were once written before the refusal).
fn listing_all_or_nothing(t: &mut Checks, child: u64) {
    const MARK: u64 = 0xa5a5_a5a5_a5a5_a5a5;
    // Two unmapped pages past this program's image, in the page table that
    // maps it (no table made, so the leak check at the end still holds).
    let region = PROGRAM_BASE & !0x1f_ffff;
    let free = |p: u64| exposed::pte(p).is_none() && exposed::pte(p + 4096).is_none();
    let Some(page) = (PROGRAM_BASE..region + 0x1f_f000).step_by(4096).find(|&p| free(p)) else {
        t.check(false, "two unmapped pages near the image");
        return;
    };
    let Ok([frame, _]) = sys::frame_alloc(oxok_libos::abi::ANY_FRAME) else {
        t.check(false, "a frame for the buffer");
        return;
    };
    t.expect(sys::page_map(0, frame, page, pte::WRITABLE | pte::NO_EXECUTE), Ok([]), "map the buffer's page");
    let record = core::mem::size_of::<Mapping>() as u64;
    let buf = page + 4096 - 3 * record;
    for at in (buf..page + 4096).step_by(8) {
        oxok_tests::mem::write(at, MARK);
    }
    let listed = sys::env_mappings(child, PROGRAM_BASE, buf, 8);
    t.expect(listed.map(|_| ()), Err(Error::BadAddress), "a listing running off its buffer's page");
    let untouched = (buf..page + 4096).step_by(8).all(|at| oxok_tests::mem::read(at) == MARK);
    t.check(untouched, "… wrote nothing");
    let _ = sys::page_unmap(0, page);
    let _ = sys::frame_free(frame);
}
