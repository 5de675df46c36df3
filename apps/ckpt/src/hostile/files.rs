//! ckpt-hostile, part 2: open files and capabilities outside the tree.
//!
//! 3. Open files that cannot be carried are refused at the checkpoint with
//!    their reason and path, and the tree runs on: an open directory whose
//!    cursor's entry was removed, a file removed since it was opened. At restore: a file the image does not carry and this machine
//!    lacks, a carried file whose path here holds other bytes (left as it
//!    is), forged file records; a file the restore created is removed when
//!    the build fails later. Nothing is left behind.
//! 4. `pct_owe` (binding a transfer in progress at restore) needs write on
//!    both environments and a callee serving without owing a reply.
//!    A capability for an environment outside the tree is carried when the
//!    checkpointer holds one for it, and otherwise revoked visibly: its
//!    slot is empty (`BadCap`) and the restored program is told (the
//!    counter prints `counter: revoked capability slots`); every other
//!    slot is as it was, empty ones empty.

use alloc::format;
use alloc::vec::Vec;
use core::mem::offset_of;
use oxok_ckpt::image::{Image, ImageError};
use oxok_ckpt::restore::restore;
use oxok_ckpt::{CkptError, save};
use oxok_libos::abi::{EnvState, Error, Regs, cap_kind, rights};
use oxok_libos::exec::{self, Child};
use oxok_libos::fs;
use oxok_libos::{exposed, sys, time};
use oxok_tests::Checks;

/// A counter with an open file `path`, left to run until it has written
/// its header and a first number there (so its open is complete: a fixed
/// wait was too short on a loaded host), at most 5 s.
fn counter_with(path: &str) -> Option<Child> {
    let c = exec::spawn("ckpt-counter", &["ckpt-counter", "100000", "5", "0", path]).ok()?;
    for _ in 0..500 {
        if fs::stat(path).is_ok_and(|m| m.size > 100) {
            break;
        }
        let _ = time::sleep_ms(10);
    }
    Some(c)
}

/// Destroys the counter and its child.
fn kill_tree(c: &Child) {
    match save::Tree::stop(c.slot) {
        Ok(tree) => tree.destroy(),
        Err(_) => {
            let _ = sys::env_destroy(c.slot);
        }
    }
}

fn runs(c: &Child) -> u64 {
    exposed::env_entry(c.id).map_or(0, |r| r.runs)
}

/// True if `c` still runs: its `runs` word moves.
fn runs_on(c: &Child) -> bool {
    let before = runs(c);
    let _ = time::sleep_ms(30);
    runs(c) > before
}

fn refused_with(got: Result<(), CkptError>, why: &str, path: &str) -> bool {
    matches!(got, Err(CkptError::File(w, p)) if w.starts_with(why) && p.contains(path))
}

fn envs() -> u64 {
    oxok_libos::process::usage(0).map_or(0, |u| u.envs)
}

/// Environments of the account back to `want`, once teardowns finish.
fn envs_settle(want: u64) -> u64 {
    let mut got = envs();
    for _ in 0..20_000 {
        if got == want {
            break;
        }
        let _ = sys::yield_cpu(0);
        got = envs();
    }
    got
}

/// The account's environments once they stop changing (teardowns of
/// destroyed trees finished).
fn quiet() -> u64 {
    let (mut last, mut same) = (envs(), 0);
    for _ in 0..20_000 {
        let _ = sys::yield_cpu(0);
        let now = envs();
        same = if now == last { same + 1 } else { 0 };
        last = now;
        if same >= 200 {
            break;
        }
    }
    last
}

/// A forged file record: what it is, how it is made, the refusal.
type Forgery = (&'static str, fn(&mut Image), &'static str);

fn restore_err(img: &Image) -> Result<(), CkptError> {
    Image::decode(&img.encode()).map_err(CkptError::Image).and_then(|i| restore(&i).map(|_| ()))
}

pub fn files(t: &mut Checks) {
    let Ok(server) = fs::spawn_server() else {
        t.check(false, "start a file server");
        return;
    };
    // An open directory whose cursor's entry was removed: a re-open could
    // not find where the listing stood.
    match exec::spawn("ckpt-share", &["ckpt-share", "6", "200", "/h-share.txt", "/h-dir"]) {
        Ok(c) => {
            // It reads the first entry (`a`) right after writing its first
            // line, then sleeps 200 ms before the next: wait for that line
            // (starting it and its child takes long on a loaded host), then
            // a little more.
            for _ in 0..300 {
                if fs::read_file("/h-share.txt").is_ok_and(|d| d.starts_with(b"p1\n")) {
                    break;
                }
                let _ = time::sleep_ms(10);
            }
            let _ = time::sleep_ms(30);
            let _ = fs::unlink("/h-dir/a");
            let got = save::checkpoint(c.slot, false).map(|_| ());
            t.check(
                refused_with(got, "an open directory whose cursor's entry is gone", "/h-dir"),
                "a checkpoint with a directory whose cursor's entry is gone is refused",
            );
            let ended = exec::wait(c).map(|s| s.code());
            t.expect(ended, Ok(0), "the tree runs on after the refused checkpoint and ends well");
        }
        Err(_) => t.check(false, "spawn ckpt-share"),
    }
    // A file removed since it was opened.
    if let Some(c) = counter_with("/h-gone.txt") {
        let _ = fs::unlink("/h-gone.txt");
        let got = save::checkpoint(c.slot, false).map(|_| ());
        t.check(refused_with(got, "removed or replaced", "/h-gone.txt"), "a checkpoint with a removed file is refused");
        t.check(runs_on(&c), "the tree runs on");
        kill_tree(&c);
    }
    let base = quiet();
    let Some(c) = counter_with("/h-file.txt") else {
        t.check(false, "spawn a counter with a file");
        return;
    };
    let local = save::checkpoint(c.slot, false).map(|(tree, img)| {
        tree.continue_all();
        img
    });
    let carried = save::checkpoint(c.slot, true).map(|(tree, img)| {
        tree.destroy();
        img
    });
    let (Ok(local), Ok(carried)) = (local, carried) else {
        t.check(false, "checkpoint a counter with a file");
        kill_tree(&c);
        return;
    };
    t.expect(local.files.len(), 1, "one open file saved");
    t.check(
        local.files[0].content.is_none() && carried.files[0].content.is_some(),
        "content carried only for another machine",
    );
    // Not carried and not here.
    let _ = fs::unlink("/h-file.txt");
    t.check(
        refused_with(restore_err(&local), "not on this machine", "/h-file.txt"),
        "a file neither carried nor here is refused",
    );
    // Carried, but the path here holds other bytes: left alone.
    let _ = fs::write_file("/h-file.txt", b"other");
    t.check(
        refused_with(restore_err(&carried), "exists on this machine with other content", "/h-file.txt"),
        "a carried file never overwrites another",
    );
    t.expect(fs::read_file("/h-file.txt").ok(), Some(b"other".to_vec()), "the file here is unchanged");
    // Created from the image, then the build fails: removed again.
    let _ = fs::unlink("/h-file.txt");
    let mut f = carried.clone();
    let rip = (offset_of!(EnvState, regs) + offset_of!(Regs, rip)) / 8;
    if let Some(e) = f.envs.last_mut() {
        e.state[rip] = 0x8000_0000_0000;
    }
    t.expect(
        restore_err(&f).err(),
        Some(CkptError::Call("env_set_state", Error::Invalid)),
        "a bad member after the files",
    );
    t.check(fs::stat("/h-file.txt").is_err(), "the file the failed restore created is removed");
    // Forged file records.
    let forged: [Forgery; 4] = [
        ("a file record asking to create", |i| i.files[0].flags |= 4, "file record"),
        ("a relative file path", |i| i.files[0].path = b"h-file.txt".to_vec(), "file path"),
        (
            "a file entry in an unmapped page",
            |i| i.files[0].slot = 63,
            "a file entry in a page its process does not map",
        ),
        ("a file of a member that is not there", |i| i.files[0].env = 7, "file record"),
    ];
    for (what, forge, want) in forged {
        let mut i = carried.clone();
        forge(&mut i);
        t.expect(Image::decode(&i.encode()).err(), Some(ImageError::Invalid(want)), what);
    }
    t.expect(envs_settle(base), base, "no environment left behind by the refused restores");
    let _ = fs::stop_server(server);
}

pub fn capabilities(t: &mut Checks) {
    let (Ok(a), Ok(b)) = (exec::spawn("sleep", &["sleep", "20"]), exec::spawn("sleep", &["sleep", "20"])) else {
        t.check(false, "spawn two bystanders");
        return;
    };
    let Ok(v) = exec::spawn("ckpt-counter", &["ckpt-counter", "4", "40"]) else {
        t.check(false, "spawn the counter");
        return;
    };
    let (Ok([sa]), Ok([sb])) =
        (sys::cap_grant(a.slot, v.slot, rights::CALL), sys::cap_grant(b.slot, v.slot, rights::CALL))
    else {
        t.check(false, "give the counter capabilities for the bystanders");
        return;
    };
    // Binding a reply (`pct_owe`) needs write on both and a callee that
    // serves something and owes nothing.
    t.expect(sys::pct_owe(b.slot, b.slot).err(), Some(Error::Invalid), "pct_owe of an environment to itself");
    t.expect(sys::pct_owe(b.slot, v.slot).err(), Some(Error::Invalid), "pct_owe for an environment not serving");
    if let Ok([ro]) = sys::cap_derive(b.slot, rights::READ | rights::CALL) {
        t.expect(sys::pct_owe(ro, v.slot).err(), Some(Error::Denied), "pct_owe without write on the callee");
        t.expect(sys::pct_owe(v.slot, ro).err(), Some(Error::Denied), "pct_owe without write on the caller");
        let _ = sys::cap_drop(ro);
    }
    let _ = time::sleep_ms(50);
    let img = match save::checkpoint(v.slot, false) {
        Ok((tree, img)) => {
            tree.destroy();
            img
        }
        Err(e) => {
            t.check(false, &format!("checkpoint the counter: {e}"));
            return;
        }
    };
    // Bystander A is gone and this checkpointer holds nothing for it.
    let _ = sys::env_destroy(a.slot);
    let _ = sys::cap_drop(a.slot);
    let r = match restore(&img) {
        Ok(r) => r,
        Err(e) => {
            t.check(false, &format!("restore the counter: {e}"));
            return;
        }
    };
    let root = r.members[0].0;
    t.expect(sys::cap_peek(root, sa).err(), Some(Error::BadCap), "the capability not carried is revoked (empty slot)");
    t.expect(
        sys::cap_peek(root, sb).ok(),
        Some([cap_kind::ENV, b.id, rights::CALL]),
        "the capability the checkpointer holds is carried",
    );
    let me = exposed::self_id();
    let parent = (1..64u64).any(|s| sys::cap_peek(root, s).is_ok_and(|[k, n, _]| k == cap_kind::ENV && n == me));
    t.check(parent, "the capability for the saving checkpointer now names the restoring one");
    let saved: Vec<u64> = img.envs[0].caps.iter().map(|c| c.slot).filter(|&s| s != sa).collect();
    let now: Vec<u64> = (1..64u64).filter(|&s| sys::cap_peek(root, s).is_ok()).collect();
    t.expect(now, saved, "every other slot as saved, empty ones empty");
    let code = exec::wait(Child { slot: root, id: r.members[0].1 }).map(|s| s.code()).ok();
    t.expect(code, Some(0), "the restored counter finishes");
    let _ = sys::env_destroy(b.slot);
}
