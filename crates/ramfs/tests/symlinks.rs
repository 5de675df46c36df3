//! Symbolic links: making and reading them, following them in the middle
//! and at the end of paths, relative and absolute targets, dangling links,
//! loops and the 40-link limit, trailing slashes, and the operations that
//! act on a link itself (unlink, rename, rmdir, mkdir, O_NOFOLLOW).

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::*;
use oxok_ramfs::{Fs, FsError, Ino, Kind, OpenFlags, PATH_MAX};

/// `/a/b/f` holding "data", `/d` empty.
fn tree() -> (Fs, Ino, Ino, Ino, Ino) {
    let mut fs = Fs::new();
    let a = fs.mkdir(ROOT, "a").unwrap();
    let b = fs.mkdir(a, "b").unwrap();
    let f = put(&mut fs, "/a/b/f", b"data");
    let d = fs.mkdir(ROOT, "d").unwrap();
    (fs, a, b, f, d)
}

#[test]
fn create_readlink_stat_lstat() {
    let (mut fs, _a, _b, f, d) = tree();
    fs.set_time(7);
    let l = fs.symlink(ROOT, "a/b/f", "/l").unwrap();
    assert_eq!(target(&fs, "l"), "a/b/f");
    assert_eq!(fs.lookup_nofollow(ROOT, "l"), Ok(l));
    assert_eq!(fs.lookup(ROOT, "l"), Ok(f));
    let st = fs.stat(l).unwrap();
    assert_eq!((st.kind, st.size, st.allocated, st.nlink, st.mode), (Kind::Symlink, 5, 0, 1, 0o777));
    assert_eq!((st.atime, st.mtime, st.ctime), (7, 7, 7));
    assert_eq!(fs.stat(fs.lookup(ROOT, "l").unwrap()).unwrap().kind, Kind::File);
    let e = fs.readdir(ROOT).unwrap().into_iter().find(|e| e.name == b"l").unwrap();
    assert_eq!((e.ino, e.kind), (l, Kind::Symlink));
    assert_eq!(fs.readdir_after(ROOT, Some(b"d"), 1).unwrap()[0].kind, Kind::Symlink);
    // The root's mtime moved; the target is stored verbatim.
    assert_eq!(fs.stat(ROOT).unwrap().mtime, 7);
    let odd = b"//x/./../\xff//".as_slice();
    fs.symlink(d, odd, "odd").unwrap();
    assert_eq!(fs.readlink(d, "odd").unwrap(), odd);
    // readlink is for links only; it does not follow the last component.
    assert_eq!(fs.readlink(ROOT, "a/b/f"), Err(FsError::Invalid));
    assert_eq!(fs.readlink(ROOT, "a"), Err(FsError::Invalid));
    assert_eq!(fs.readlink(ROOT, "/"), Err(FsError::Invalid));
    assert_eq!(fs.readlink(ROOT, "nope"), Err(FsError::NotFound));
    assert_eq!(fs.readlink(ROOT, ""), Err(FsError::NotFound));
    // The inode is not a file or directory.
    assert_eq!(fs.read(l, 0, &mut [0; 4]), Err(FsError::Invalid));
    assert_eq!(fs.write(l, 0, b"x"), Err(FsError::Invalid));
    assert_eq!(fs.truncate(l, 0), Err(FsError::Invalid));
    assert_eq!(fs.readdir(l), Err(FsError::NotADirectory));
    assert_eq!(fs.path_of(l), Err(FsError::NotADirectory));
    assert_eq!(fs.parent(l), Err(FsError::NotADirectory));
    assert_eq!(fs.lookup(l, "x"), Err(FsError::NotADirectory));
    assert_eq!(fs.create(ROOT, "s", Kind::Symlink), Err(FsError::Invalid));
    // Pins work as for files.
    fs.pin(l).unwrap();
    fs.unlink(ROOT, "l").unwrap();
    assert_eq!(fs.stat(l).unwrap().nlink, 0);
    ok(&fs);
    fs.unpin(l).unwrap();
    assert!(!fs.is_live(l));
    ok(&fs);
}

#[test]
fn symlink_errors() {
    let (mut fs, a, _b, _f, d) = tree();
    fs.symlink(ROOT, "nowhere", "dangling").unwrap();
    // Names that exist, whatever they are, and names that are not names.
    for p in ["a", "a/b/f", "d", "dangling", ".", "..", "/", "a/..", "a/b/f/", "d/"] {
        assert_eq!(fs.symlink(ROOT, "t", p), Err(FsError::Exists), "{p}");
    }
    assert_eq!(fs.symlink(ROOT, "t", "new/"), Err(FsError::NotFound));
    assert_eq!(fs.symlink(ROOT, "t", "nope/x"), Err(FsError::NotFound));
    assert_eq!(fs.symlink(ROOT, "t", "a/b/f/x"), Err(FsError::NotADirectory));
    assert_eq!(fs.symlink(ROOT, "t", "dangling/x"), Err(FsError::NotFound));
    assert_eq!(fs.symlink(ROOT, "t", ""), Err(FsError::NotFound));
    assert_eq!(fs.symlink(ROOT, "t", "x\0"), Err(FsError::InvalidName));
    // The target is checked before the path.
    assert_eq!(fs.symlink(ROOT, "", "a"), Err(FsError::NotFound));
    assert_eq!(fs.symlink(ROOT, "x\0y", "new"), Err(FsError::InvalidName));
    assert_eq!(fs.symlink(ROOT, "\0", "a"), Err(FsError::InvalidName));
    assert_eq!(fs.symlink(ROOT, "x".repeat(PATH_MAX), "new"), Err(FsError::TooLong));
    assert_eq!(fs.symlink(ROOT, "x".repeat(PATH_MAX + 1), "a"), Err(FsError::TooLong));
    let longest = "x".repeat(PATH_MAX - 1);
    let l = fs.symlink(ROOT, &longest, "longest").unwrap();
    assert_eq!(fs.stat(l).unwrap().size, PATH_MAX as u64 - 1);
    assert_eq!(fs.readlink(ROOT, "longest").unwrap(), longest.as_bytes());
    // Following it: a component longer than NAME_MAX.
    assert_eq!(fs.lookup(ROOT, "longest"), Err(FsError::TooLong));
    // A link made through a link to a directory lands in the directory.
    fs.symlink(ROOT, "d", "ld").unwrap();
    let x = fs.symlink(ROOT, "t", "ld/x").unwrap();
    assert_eq!(fs.lookup_nofollow(d, "x"), Ok(x));
    // In a removed directory: NotFound.
    let gone = fs.mkdir(a, "gone").unwrap();
    fs.pin(gone).unwrap();
    fs.rmdir(a, "gone").unwrap();
    assert_eq!(fs.symlink(gone, "t", "x"), Err(FsError::NotFound));
    fs.unpin(gone).unwrap();
    assert_eq!(fs.symlink(gone, "t", "x"), Err(FsError::BadInode));
    ok(&fs);
}

#[test]
fn followed_in_the_middle_and_at_the_end() {
    let (mut fs, a, b, f, d) = tree();
    fs.symlink(ROOT, "a", "la").unwrap();
    fs.symlink(ROOT, "/a/b", "lb").unwrap();
    fs.symlink(ROOT, "la/b", "lab").unwrap(); // a link through a link
    for (p, want) in [
        ("la", a),
        ("la/b", b),
        ("la/b/f", f),
        ("lb/f", f),
        ("lb/./f", f),
        ("lab/f", f),
        ("lab/../b/f", f),
        ("/la//b///f", f),
        ("la/../d", d),
        ("lb/..", a),
    ] {
        assert_eq!(fs.lookup(ROOT, p), Ok(want), "{p}");
        if p != "la" {
            assert_eq!(fs.lookup_nofollow(ROOT, p), Ok(want), "{p}");
        }
    }
    // Only the last component escapes following.
    assert_eq!(fs.stat(fs.lookup_nofollow(ROOT, "la").unwrap()).unwrap().kind, Kind::Symlink);
    assert_eq!(fs.stat(fs.lookup_nofollow(ROOT, "lab").unwrap()).unwrap().kind, Kind::Symlink);
    assert_eq!(fs.stat(fs.lookup_nofollow(ROOT, "la/b").unwrap()).unwrap().kind, Kind::Dir);
    // Name operations resolve their directory through links.
    let g = fs.create(ROOT, "lb/g", Kind::File).unwrap();
    assert_eq!(fs.lookup(b, "g"), Ok(g));
    let m = fs.mkdir(ROOT, "la/m").unwrap();
    assert_eq!(fs.path_of(m).unwrap(), b"/a/m");
    fs.rename(ROOT, "lab/g", "la/m/g").unwrap();
    assert_eq!(fs.lookup(m, "g"), Ok(g));
    fs.unlink(ROOT, "la/m/g").unwrap();
    fs.rmdir(ROOT, "la/m").unwrap();
    assert_eq!(ls(&fs, "/a"), ["b"]);
    // Reading through a link reads the file.
    let ino = fs.open(ROOT, "lb/f", READ).unwrap();
    assert_eq!(contents(&fs, ino), b"data");
    // Walking through a link to a file is walking through a file.
    fs.symlink(ROOT, "a/b/f", "lf").unwrap();
    assert_eq!(fs.lookup(ROOT, "lf/x"), Err(FsError::NotADirectory));
    assert_eq!(fs.lookup(ROOT, "lf/."), Err(FsError::NotADirectory));
    assert_eq!(fs.create(ROOT, "lf/x", Kind::File), Err(FsError::NotADirectory));
    ok(&fs);
}

#[test]
fn relative_targets_resolve_from_the_links_directory() {
    let (mut fs, a, b, f, d) = tree();
    let sub = fs.mkdir(d, "sub").unwrap();
    // /d/l -> ../a/b/f: from /d, whatever the working directory.
    fs.symlink(ROOT, "../a/b/f", "d/l").unwrap();
    assert_eq!(fs.lookup(ROOT, "d/l"), Ok(f));
    assert_eq!(fs.lookup(d, "l"), Ok(f));
    assert_eq!(fs.lookup(b, "../../d/l"), Ok(f));
    assert_eq!(fs.lookup(sub, "../l"), Ok(f));
    // Absolute targets start from the root, whatever the link's directory.
    fs.symlink(ROOT, "/a/b", "d/sub/abs").unwrap();
    assert_eq!(fs.lookup(b, "/d/sub/abs/f"), Ok(f));
    assert_eq!(fs.lookup(sub, "abs"), Ok(b));
    // `.` is the link's own directory; `..` after a link is the parent of
    // where it led, not of the link.
    fs.symlink(ROOT, ".", "d/sub/here").unwrap();
    assert_eq!(fs.lookup(ROOT, "d/sub/here"), Ok(sub));
    assert_eq!(fs.lookup(ROOT, "d/sub/here/here/here/abs"), Ok(b));
    assert_eq!(fs.lookup(ROOT, "d/sub/abs/.."), Ok(a));
    fs.symlink(ROOT, "..", "d/sub/up").unwrap();
    assert_eq!(fs.lookup(ROOT, "d/sub/up"), Ok(d));
    assert_eq!(fs.lookup(ROOT, "d/sub/up/up"), Err(FsError::NotFound));
    assert_eq!(fs.lookup(ROOT, "d/sub/up/sub/up/l"), Ok(f));
    // Same target text, different directories, different results.
    fs.symlink(ROOT, "b", "a/rel").unwrap();
    fs.symlink(ROOT, "b", "rel").unwrap();
    assert_eq!(fs.lookup(ROOT, "a/rel"), Ok(b));
    assert_eq!(fs.lookup(ROOT, "rel"), Err(FsError::NotFound));
    // A target of slashes only is the root.
    fs.symlink(ROOT, "///", "d/root").unwrap();
    assert_eq!(fs.lookup(ROOT, "d/root"), Ok(ROOT));
    assert_eq!(fs.lookup(sub, "../root/a/b/f"), Ok(f));
    ok(&fs);
}

#[test]
fn dangling_links() {
    let (mut fs, a, b, _f, d) = tree();
    let l = fs.symlink(ROOT, "t", "a/l").unwrap();
    assert_eq!(fs.lookup(ROOT, "a/l"), Err(FsError::NotFound));
    assert_eq!(fs.lookup(ROOT, "a/l/"), Err(FsError::NotFound));
    assert_eq!(fs.lookup_nofollow(ROOT, "a/l"), Ok(l));
    assert_eq!(target(&fs, "a/l"), "t");
    assert_eq!(fs.open(ROOT, "a/l", READ), Err(FsError::NotFound));
    // Exclusive creation never follows: the name exists.
    assert_eq!(fs.open(ROOT, "a/l", EXCL), Err(FsError::Exists));
    assert_eq!(fs.open(ROOT, "a/l", OpenFlags { nofollow: true, ..CREATE }), Err(FsError::Loop));
    assert_eq!(ls(&fs, "/a"), ["b", "l"]);
    // Plain creation follows it and makes the target, next to the link.
    let t = fs.open(ROOT, "a/l", CREATE).unwrap();
    assert_eq!(fs.lookup(a, "t"), Ok(t));
    assert_eq!(fs.lookup(ROOT, "a/l"), Ok(t));
    assert_eq!(fs.open(ROOT, "a/l", CREATE), Ok(t));
    assert_eq!(fs.stat(t).unwrap().nlink, 1);
    // Absolute and multi-component targets: made where the target says.
    fs.symlink(ROOT, "/d/made", "a/abs").unwrap();
    let made = fs.open(a, "abs", CREATE).unwrap();
    assert_eq!(fs.lookup(d, "made"), Ok(made));
    fs.symlink(ROOT, "../a/b/new", "d/rel").unwrap();
    let new = fs.open(d, "rel", CREATE).unwrap();
    assert_eq!(fs.lookup(b, "new"), Ok(new));
    // A chain of dangling links ends in the last one's target.
    fs.symlink(ROOT, "c2", "c1").unwrap();
    fs.symlink(ROOT, "d/c3", "c2").unwrap();
    fs.symlink(ROOT, "../end", "d/c3").unwrap();
    let end = fs.open(ROOT, "c1", CREATE).unwrap();
    assert_eq!(fs.lookup(ROOT, "end"), Ok(end));
    // Where the target cannot be made.
    fs.symlink(ROOT, "nodir/x", "bad1").unwrap();
    fs.symlink(ROOT, "a/b/f/x", "bad2").unwrap();
    fs.symlink(ROOT, "newdir/", "bad3").unwrap();
    fs.symlink(ROOT, ".", "bad4").unwrap();
    fs.symlink(ROOT, "/", "bad5").unwrap();
    fs.symlink(ROOT, "d", "bad6").unwrap();
    fs.symlink(ROOT, "n".repeat(256), "bad7").unwrap();
    for (p, want) in [
        ("bad1", FsError::NotFound),
        ("bad2", FsError::NotADirectory),
        ("bad3", FsError::IsADirectory),
        ("bad4", FsError::IsADirectory),
        ("bad5", FsError::IsADirectory),
        ("bad6", FsError::IsADirectory),
        ("bad7", FsError::TooLong),
    ] {
        assert_eq!(fs.open(ROOT, p, CREATE), Err(want), "{p}");
        assert_eq!(fs.open(ROOT, p, EXCL), Err(FsError::Exists), "{p}");
    }
    assert_eq!(fs.lookup(ROOT, "newdir"), Err(FsError::NotFound));
    // A dangling link in a removed directory's place.
    let gone = fs.mkdir(ROOT, "gone").unwrap();
    fs.symlink(ROOT, "gone/x", "into_gone").unwrap();
    fs.pin(gone).unwrap();
    fs.rmdir(ROOT, "gone").unwrap();
    assert_eq!(fs.open(ROOT, "into_gone", CREATE), Err(FsError::NotFound));
    fs.unpin(gone).unwrap();
    ok(&fs);
}

#[test]
fn loops_and_the_limit_of_forty() {
    let (mut fs, _a, _b, f, d) = tree();
    fs.symlink(ROOT, "y", "x").unwrap();
    fs.symlink(ROOT, "x", "y").unwrap();
    fs.symlink(ROOT, "self", "self").unwrap();
    fs.symlink(ROOT, "./self2/", "self2").unwrap();
    fs.symlink(ROOT, "/d/../deep/x", "deep").unwrap();
    for p in ["x", "y", "x/", "x/z", "self", "self/..", "self2", "deep", "d/../x"] {
        assert_eq!(fs.lookup(ROOT, p), Err(FsError::Loop), "{p}");
        assert_eq!(fs.lookup_nofollow(ROOT, p).is_ok(), !p.contains('/') || p == "d/../x", "{p}");
        assert_eq!(fs.open(ROOT, p, READ), Err(FsError::Loop), "{p}");
        // Creating with a trailing slash fails before following, even at
        // the end of a target (self2), as on Linux.
        let want = if p == "x/" || p == "self2" { FsError::IsADirectory } else { FsError::Loop };
        assert_eq!(fs.open(ROOT, p, CREATE), Err(want), "{p}");
    }
    // The links themselves are fine.
    assert!(fs.lookup_nofollow(ROOT, "x").is_ok());
    assert_eq!(target(&fs, "self"), "self");
    assert_eq!(fs.create(ROOT, "x/new", Kind::File), Err(FsError::Loop));
    assert_eq!(fs.mkdir(ROOT, "self/new"), Err(FsError::Loop));
    fs.unlink(ROOT, "self").unwrap();
    fs.rename(ROOT, "x", "d/x").unwrap();
    assert_eq!(fs.lookup(ROOT, "y"), Err(FsError::NotFound), "y -> x, now gone");

    // A chain: c0 -> c1 -> ... -> cN -> /a/b/f follows N + 1 links.
    let chain = |fs: &mut Fs, dir: &str, n: usize| {
        fs.mkdir(ROOT, dir).unwrap();
        for i in 0..n {
            let target = if i + 1 == n { "/a/b/f".to_string() } else { format!("c{}", i + 1) };
            fs.symlink(ROOT, target, format!("{dir}/c{i}")).unwrap();
        }
    };
    chain(&mut fs, "forty", 40);
    chain(&mut fs, "forty_one", 41);
    assert_eq!(fs.lookup(ROOT, "forty/c0"), Ok(f));
    assert_eq!(fs.lookup(ROOT, "forty/c1"), Ok(f));
    assert_eq!(fs.lookup(ROOT, "forty_one/c0"), Err(FsError::Loop));
    assert_eq!(fs.lookup(ROOT, "forty_one/c1"), Ok(f));
    assert!(fs.lookup_nofollow(ROOT, "forty_one/c0").is_ok());
    // The count is per resolution, over every component: m -> "."; each
    // `m/` follows one link.
    fs.symlink(ROOT, ".", "d/m").unwrap();
    assert_eq!(fs.lookup(ROOT, format!("d/{}", "m/".repeat(40))), Ok(d));
    assert_eq!(fs.lookup(ROOT, format!("d/{}", "m/".repeat(41))), Err(FsError::Loop));
    assert_eq!(fs.lookup_nofollow(ROOT, format!("d/{}m", "m/".repeat(40))), Ok(fs.lookup_nofollow(d, "m").unwrap()));
    assert_eq!(fs.lookup(ROOT, format!("d/{}m", "m/".repeat(40))), Err(FsError::Loop));
    // Two links of 20 each in one path: 40 in all.
    fs.symlink(ROOT, "m/".repeat(19) + "m", "d/m20").unwrap();
    assert_eq!(fs.lookup(d, "m20/m20"), Err(FsError::Loop), "2 + 2 × 20 links");
    fs.symlink(ROOT, "m/".repeat(18) + "m", "d/m19").unwrap();
    assert_eq!(fs.lookup(d, "m19/m19"), Ok(d), "2 + 2 × 19 links");
    ok(&fs);
}

#[test]
fn trailing_slashes() {
    let (mut fs, _a, _b, f, d) = tree();
    let ld = fs.symlink(ROOT, "d", "ld").unwrap();
    let lf = fs.symlink(ROOT, "a/b/f", "lf").unwrap();
    // A trailing slash follows the link, even for lstat, and demands a
    // directory.
    assert_eq!(fs.lookup(ROOT, "ld/"), Ok(d));
    assert_eq!(fs.lookup_nofollow(ROOT, "ld/"), Ok(d));
    assert_eq!(fs.lookup_nofollow(ROOT, "ld"), Ok(ld));
    assert_eq!(fs.lookup_nofollow(ROOT, "lf"), Ok(lf));
    assert_eq!(fs.lookup(ROOT, "ld/."), Ok(d));
    assert_eq!(fs.lookup(ROOT, "lf"), Ok(f));
    assert_eq!(fs.lookup(ROOT, "lf/"), Err(FsError::NotADirectory));
    assert_eq!(fs.lookup_nofollow(ROOT, "lf/"), Err(FsError::NotADirectory));
    assert_eq!(fs.readlink(ROOT, "ld/"), Err(FsError::Invalid));
    assert_eq!(fs.readlink(ROOT, "lf/"), Err(FsError::NotADirectory));
    assert_eq!(fs.open(ROOT, "ld/", OpenFlags { nofollow: true, ..READ }), Ok(d));
    assert_eq!(fs.open(ROOT, "lf/", READ), Err(FsError::NotADirectory));
    assert_eq!(fs.open(ROOT, "ld/", CREATE), Err(FsError::IsADirectory));
    assert_eq!(fs.open(ROOT, "lf/", CREATE), Err(FsError::IsADirectory));
    // A slash at the end of a target demands a directory too.
    fs.symlink(ROOT, "a/b/f/", "lf_slash").unwrap();
    fs.symlink(ROOT, "d//", "ld_slash").unwrap();
    assert_eq!(fs.lookup(ROOT, "lf_slash"), Err(FsError::NotADirectory));
    assert_eq!(fs.lookup(ROOT, "ld_slash"), Ok(d));
    fs.symlink(ROOT, "ld_slash", "via").unwrap();
    assert_eq!(fs.lookup(ROOT, "via"), Ok(d));
    fs.symlink(ROOT, "lf", "via_f").unwrap();
    assert_eq!(fs.lookup(ROOT, "via_f/"), Err(FsError::NotADirectory), "slash kept through two links");
    // Name operations act on the link; with a slash, as Linux, the link
    // is not a directory.
    assert_eq!(fs.unlink(ROOT, "ld/"), Err(FsError::NotADirectory));
    assert_eq!(fs.unlink(ROOT, "lf/"), Err(FsError::NotADirectory));
    assert_eq!(fs.rmdir(ROOT, "ld/"), Err(FsError::NotADirectory));
    assert_eq!(fs.rmdir(ROOT, "ld"), Err(FsError::NotADirectory));
    assert_eq!(fs.mkdir(ROOT, "ld"), Err(FsError::Exists));
    assert_eq!(fs.mkdir(ROOT, "ld/"), Err(FsError::Exists));
    assert_eq!(fs.rename(ROOT, "ld/", "x"), Err(FsError::NotADirectory));
    assert_eq!(fs.rename(ROOT, "lf", "x/"), Err(FsError::NotADirectory));
    assert_eq!(fs.link(ROOT, "ld/", "x"), Err(FsError::NotPermitted), "follows to the directory");
    assert_eq!(fs.link(ROOT, "lf/", "x"), Err(FsError::NotADirectory));
    assert_eq!(fs.symlink(ROOT, "t", "ld/"), Err(FsError::Exists));
    // Nothing changed.
    assert_eq!(ls(&fs, "/"), ["a", "d", "ld", "ld_slash", "lf", "lf_slash", "via", "via_f"]);
    ok(&fs);
}

#[test]
fn unlink_rmdir_and_rename_act_on_the_link() {
    let (mut fs, _a, b, f, d) = tree();
    let inodes = fs.statfs().inodes;
    let l = fs.symlink(ROOT, "a/b/f", "l").unwrap();
    assert_eq!(fs.statfs().inodes, inodes + 1);
    fs.unlink(ROOT, "l").unwrap();
    assert!(!fs.is_live(l));
    assert_eq!(fs.statfs().inodes, inodes);
    assert_eq!(fs.stat(f).unwrap().nlink, 1);
    assert_eq!(fs.lookup(ROOT, "a/b/f"), Ok(f));
    // Removing the target leaves the link dangling.
    let l = fs.symlink(ROOT, "a/b/f", "l").unwrap();
    fs.unlink(ROOT, "a/b/f").unwrap();
    assert_eq!(fs.lookup(ROOT, "l"), Err(FsError::NotFound));
    assert_eq!(fs.lookup_nofollow(ROOT, "l"), Ok(l));
    // rmdir of a link to a directory: not a directory; the directory stays.
    let ld = fs.symlink(ROOT, "d", "ld").unwrap();
    assert_eq!(fs.rmdir(ROOT, "ld"), Err(FsError::NotADirectory));
    assert_eq!(fs.unlink(ROOT, "ld"), Ok(()));
    assert!(!fs.is_live(ld) && fs.is_live(d));
    // Renaming moves the link, target text unchanged: a relative target now
    // resolves from the new directory.
    let f = put(&mut fs, "/a/b/f", b"data");
    fs.symlink(ROOT, "b/f", "a/rel").unwrap();
    assert_eq!(fs.lookup(ROOT, "a/rel"), Ok(f));
    fs.rename(ROOT, "a/rel", "d/rel").unwrap();
    assert_eq!(target(&fs, "d/rel"), "b/f");
    assert_eq!(fs.lookup(ROOT, "d/rel"), Err(FsError::NotFound));
    fs.rename(ROOT, "d/rel", "a/rel2").unwrap();
    assert_eq!(fs.lookup(ROOT, "a/rel2"), Ok(f));
    // Kind rules: a link is a non-directory.
    fs.mkdir(ROOT, "e").unwrap();
    assert_eq!(fs.rename(ROOT, "a/rel2", "e"), Err(FsError::IsADirectory));
    assert_eq!(fs.rename(ROOT, "e", "a/rel2"), Err(FsError::NotADirectory));
    // A link replaces a file (the file is freed) and a file a link.
    let g = put(&mut fs, "/g", b"g");
    fs.rename(ROOT, "a/rel2", "g").unwrap();
    assert!(!fs.is_live(g));
    assert_eq!(fs.lookup(ROOT, "g"), Err(FsError::NotFound), "b/f from /");
    let lg = fs.lookup_nofollow(ROOT, "g").unwrap();
    let h = put(&mut fs, "/h", b"h");
    fs.rename(ROOT, "h", "g").unwrap();
    assert!(!fs.is_live(lg));
    assert_eq!(fs.lookup(ROOT, "g"), Ok(h));
    // Renaming through a link to a directory moves within the directory.
    fs.symlink(ROOT, "a/b", "lb").unwrap();
    fs.rename(ROOT, "lb/f", "lb/f2").unwrap();
    assert_eq!(fs.lookup(b, "f2"), Ok(f));
    // A link renamed onto itself: nothing happens.
    fs.rename(ROOT, "lb", "./lb").unwrap();
    assert_eq!(fs.lookup(ROOT, "lb"), Ok(b));
    ok(&fs);
}

#[test]
fn open_nofollow() {
    let (mut fs, _a, _b, f, d) = tree();
    fs.symlink(ROOT, "a/b/f", "lf").unwrap();
    fs.symlink(ROOT, "d", "ld").unwrap();
    fs.symlink(ROOT, "nowhere", "dangling").unwrap();
    let nf = |flags: OpenFlags| OpenFlags { nofollow: true, ..flags };
    for p in ["lf", "ld", "dangling"] {
        assert_eq!(fs.open(ROOT, p, nf(READ)), Err(FsError::Loop), "{p}");
        assert_eq!(fs.open(ROOT, p, nf(TRUNC)), Err(FsError::Loop), "{p}");
        assert_eq!(fs.open(ROOT, p, nf(CREATE)), Err(FsError::Loop), "{p}");
        assert_eq!(fs.open(ROOT, p, nf(EXCL)), Err(FsError::Exists), "{p}");
        assert_eq!(fs.open(ROOT, p, nf(DIRECTORY)), Err(FsError::NotADirectory), "{p}");
    }
    assert_eq!(contents(&fs, f), b"data", "not truncated");
    assert_eq!(fs.lookup(ROOT, "nowhere"), Err(FsError::NotFound), "not created");
    // Only the last component: links before it are followed.
    assert_eq!(fs.open(ROOT, "ld/../a/b/f", nf(READ)), Ok(f));
    assert_eq!(fs.open(ROOT, "ld", nf(DIRECTORY)), Err(FsError::NotADirectory));
    assert_eq!(fs.open(ROOT, "ld/", nf(DIRECTORY)), Ok(d));
    assert_eq!(fs.open(ROOT, "ld/.", nf(DIRECTORY)), Ok(d));
    let new = fs.open(ROOT, "ld/new", nf(CREATE)).unwrap();
    assert_eq!(fs.lookup(d, "new"), Ok(new));
    // Without nofollow, the same opens go through.
    assert_eq!(fs.open(ROOT, "lf", TRUNC), Ok(f));
    assert_eq!(fs.stat(f).unwrap().size, 0);
    assert_eq!(fs.open(ROOT, "ld", DIRECTORY), Ok(d));
    assert_eq!(fs.open(ROOT, "ld", OpenFlags { write: true, ..READ }), Err(FsError::IsADirectory));
    assert_eq!(fs.open(ROOT, "ld", CREATE), Err(FsError::IsADirectory));
    assert_eq!(fs.open(ROOT, "lf", DIRECTORY), Err(FsError::NotADirectory));
    ok(&fs);
}

#[test]
fn hostile_targets_never_panic() {
    let mut fs = Fs::new();
    let a = fs.mkdir(ROOT, "a").unwrap();
    // 4095 slashes: the longest target, naming the root.
    let slashes = "/".repeat(PATH_MAX - 1);
    fs.symlink(ROOT, &slashes, "s").unwrap();
    assert_eq!(fs.lookup(ROOT, "s"), Ok(ROOT));
    assert_eq!(fs.lookup(ROOT, "s/a/"), Ok(a));
    assert_eq!(fs.open(ROOT, "s", CREATE), Err(FsError::IsADirectory));
    assert_eq!(fs.open(ROOT, "s", EXCL), Err(FsError::Exists));
    // The longest targets of dots and dot-dots.
    let dots = "./".repeat((PATH_MAX - 1) / 2) + "a";
    let ups = "../".repeat((PATH_MAX - 2) / 3) + "a";
    fs.symlink(ROOT, &dots, "dots").unwrap();
    fs.symlink(ROOT, &ups, "a/ups").unwrap();
    assert_eq!(fs.lookup(ROOT, "dots"), Ok(a));
    assert_eq!(fs.lookup(ROOT, "a/ups"), Ok(a));
    // 40 links of 2000+ components each: the most work one lookup can do.
    // w0 -> ././…/w1, …, w39 -> ././…/w40, w40 -> /a.
    for i in 0..40 {
        let t = "./".repeat(2046) + &format!("w{}", i + 1);
        assert!(t.len() < PATH_MAX);
        fs.symlink(a, &t, format!("w{i}")).unwrap();
    }
    fs.symlink(a, "/a", "w40").unwrap();
    assert_eq!(fs.lookup(a, "w1"), Ok(a), "40 links");
    assert_eq!(fs.lookup(a, "w0"), Err(FsError::Loop), "41 links");
    assert_eq!(fs.lookup(a, "w1/w1"), Err(FsError::Loop));
    // Components too long inside a target, and links to them.
    fs.symlink(ROOT, "x".repeat(300) + "/y", "long").unwrap();
    fs.symlink(ROOT, "long/z", "to_long").unwrap();
    assert_eq!(fs.lookup(ROOT, "long"), Err(FsError::TooLong));
    assert_eq!(fs.lookup(ROOT, "to_long"), Err(FsError::TooLong));
    assert_eq!(fs.open(ROOT, "to_long", CREATE), Err(FsError::TooLong));
    // Bad targets never make a link.
    let before = fs.statfs().inodes;
    let bad: [Vec<u8>; 6] = [vec![], vec![0], b"a\0".to_vec(), vec![0; 10], vec![b'a'; PATH_MAX], vec![b'/'; 1 << 20]];
    for t in bad {
        assert!(fs.symlink(ROOT, &t, "bad").is_err());
    }
    assert_eq!(fs.statfs().inodes, before);
    // Random targets over a hostile alphabet, with random lookups.
    let mut rng = Rng::new(0x5711);
    let names = ["p", "q", "r", "a/p", "a/q", "s/a/r"];
    for i in 0..3000 {
        let len = if rng.chance(20) { PATH_MAX - 2 + rng.below(4) as usize } else { rng.below(16) as usize };
        let t: Vec<u8> = (0..len).map(|_| *rng.pick(b"pqra/./..\xff")).collect();
        let name = *rng.pick(&names);
        let _ = fs.unlink(ROOT, name);
        let _ = fs.symlink(ROOT, &t, name);
        let p = *rng.pick(&names);
        let _ = fs.lookup(ROOT, p);
        let _ = fs.lookup(a, format!("{p}/{}", rng.pick(&names)));
        let _ = fs.open(ROOT, p, CREATE);
        let _ = fs.readlink(ROOT, p);
        let _ = fs.unlink(ROOT, format!("{p}/p"));
        if let Err(e) = fs.fsck() {
            panic!("#{i}: fsck: {e}");
        }
    }
    ok(&fs);
}

#[test]
fn symlinks_count_against_the_inode_limit() {
    let mut fs = Fs::with_limits(oxok_ramfs::Limits { max_inodes: 3, ..oxok_ramfs::Limits::DEFAULT });
    fs.symlink(ROOT, "x", "l1").unwrap();
    fs.symlink(ROOT, "x", "l2").unwrap();
    assert_eq!(fs.symlink(ROOT, "x", "l3"), Err(FsError::NoSpace));
    assert_eq!(fs.statfs().used_bytes, 0, "targets take no pages");
    assert_eq!(ls(&fs, "/"), ["l1", "l2"]);
    ok(&fs);
}
