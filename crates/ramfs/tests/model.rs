//! A random-operation model test: thousands of operations on the file
//! system and on a simple reference (a HashMap from absolute path to node,
//! plus file contents by identity), compared result by result, with a full
//! consistency check after every step and full tree comparisons along the
//! way.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::*;
use oxok_ramfs::{Fs, FsError, Ino, Kind, Limits, OpenFlags};
use std::collections::HashMap;

const MAX_FILE: u64 = 5000;
const NAMES: [&str; 4] = ["a", "b", "c", "d"];

#[derive(Clone, Copy, PartialEq, Debug)]
enum Node {
    Dir,
    File(u64),
}

type R<T> = Result<T, FsError>;

/// The reference: canonical absolute paths to nodes; file contents by id.
struct Model {
    paths: HashMap<String, Node>,
    data: HashMap<u64, Vec<u8>>,
    next_id: u64,
}

fn components(p: &str) -> Vec<&str> {
    p.split('/').filter(|c| !c.is_empty()).collect()
}

impl Model {
    fn new() -> Model {
        Model { paths: HashMap::from([("/".to_string(), Node::Dir)]), data: HashMap::new(), next_id: 0 }
    }

    /// The errors of walking every proper prefix of `p` (not the root).
    fn walk_parent(&self, p: &str) -> R<()> {
        let comps = components(p);
        let mut at = String::new();
        for c in &comps[..comps.len() - 1] {
            at.push('/');
            at.push_str(c);
            match self.paths.get(&at) {
                None => return Err(FsError::NotFound),
                Some(Node::File(_)) => return Err(FsError::NotADirectory),
                Some(Node::Dir) => {}
            }
        }
        Ok(())
    }

    fn lookup(&self, p: &str, trailing_slash: bool) -> R<Node> {
        self.walk_parent(p)?;
        let node = *self.paths.get(p).ok_or(FsError::NotFound)?;
        if trailing_slash && node != Node::Dir {
            return Err(FsError::NotADirectory);
        }
        Ok(node)
    }

    fn children(&self, p: &str) -> Vec<(&str, Node)> {
        let prefix = format!("{p}/");
        let mut v: Vec<(&str, Node)> = self
            .paths
            .iter()
            .filter(|(k, _)| k.starts_with(&prefix) && !k[prefix.len()..].contains('/'))
            .map(|(k, n)| (&k[prefix.len()..], *n))
            .collect();
        v.sort_by(|a, b| a.0.cmp(b.0));
        v
    }

    fn create(&mut self, p: &str, exclusive: bool, truncate: bool) -> R<u64> {
        self.walk_parent(p)?;
        match self.paths.get(p) {
            Some(_) if exclusive => Err(FsError::Exists),
            Some(Node::Dir) => Err(FsError::IsADirectory),
            Some(&Node::File(id)) => {
                if truncate {
                    self.data.get_mut(&id).unwrap().clear();
                }
                Ok(id)
            }
            None => {
                let id = self.next_id;
                self.next_id += 1;
                self.paths.insert(p.to_string(), Node::File(id));
                self.data.insert(id, Vec::new());
                Ok(id)
            }
        }
    }

    fn mkdir(&mut self, p: &str) -> R<()> {
        self.walk_parent(p)?;
        if self.paths.contains_key(p) {
            return Err(FsError::Exists);
        }
        self.paths.insert(p.to_string(), Node::Dir);
        Ok(())
    }

    fn unlink(&mut self, p: &str) -> R<()> {
        match self.lookup(p, false)? {
            Node::Dir => Err(FsError::IsADirectory),
            Node::File(_) => {
                self.paths.remove(p);
                Ok(())
            }
        }
    }

    fn rmdir(&mut self, p: &str) -> R<()> {
        match self.lookup(p, false)? {
            Node::File(_) => Err(FsError::NotADirectory),
            Node::Dir if !self.children(p).is_empty() => Err(FsError::NotEmpty),
            Node::Dir => {
                self.paths.remove(p);
                Ok(())
            }
        }
    }

    fn rename(&mut self, from: &str, to: &str) -> R<()> {
        self.walk_parent(from)?;
        self.walk_parent(to)?;
        let src = *self.paths.get(from).ok_or(FsError::NotFound)?;
        if src == Node::Dir && to.starts_with(&format!("{from}/")) {
            return Err(FsError::Invalid);
        }
        if let Some(&dst) = self.paths.get(to) {
            if from == to {
                return Ok(());
            }
            match (src, dst) {
                (Node::Dir, Node::File(_)) => return Err(FsError::NotADirectory),
                (Node::File(_), Node::Dir) => return Err(FsError::IsADirectory),
                (Node::Dir, Node::Dir) if !self.children(to).is_empty() => return Err(FsError::NotEmpty),
                _ => {}
            }
            self.paths.remove(to);
        }
        let prefix = format!("{from}/");
        let moving: Vec<String> = self.paths.keys().filter(|k| *k == from || k.starts_with(&prefix)).cloned().collect();
        for k in moving {
            let node = self.paths.remove(&k).unwrap();
            self.paths.insert(format!("{to}{}", &k[from.len()..]), node);
        }
        Ok(())
    }

    fn write(&mut self, id: u64, offset: u64, data: &[u8]) -> R<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        if offset >= MAX_FILE {
            return Err(FsError::FileTooBig);
        }
        let n = data.len().min((MAX_FILE - offset) as usize);
        let file = self.data.get_mut(&id).unwrap();
        let end = offset as usize + n;
        if file.len() < end {
            file.resize(end, 0);
        }
        file[offset as usize..end].copy_from_slice(&data[..n]);
        Ok(n)
    }

    fn read(&self, id: u64, offset: u64, len: usize) -> Vec<u8> {
        let file = &self.data[&id];
        let start = (offset as usize).min(file.len());
        file[start..(start + len).min(file.len())].to_vec()
    }

    fn truncate(&mut self, id: u64, len: u64) -> R<()> {
        if len > MAX_FILE {
            return Err(FsError::FileTooBig);
        }
        self.data.get_mut(&id).unwrap().resize(len as usize, 0);
        Ok(())
    }

    fn nlink(&self, p: &str, node: Node) -> u64 {
        match node {
            Node::Dir => 2 + self.children(p).iter().filter(|(_, n)| *n == Node::Dir).count() as u64,
            Node::File(id) => self.paths.values().filter(|n| **n == Node::File(id)).count() as u64,
        }
    }

    fn dirs(&self) -> Vec<String> {
        let mut v: Vec<String> = self.paths.iter().filter(|(_, n)| **n == Node::Dir).map(|(k, _)| k.clone()).collect();
        v.sort();
        v
    }

    fn files(&self) -> Vec<String> {
        let mut v: Vec<String> =
            self.paths.iter().filter(|(_, n)| matches!(n, Node::File(_))).map(|(k, _)| k.clone()).collect();
        v.sort();
        v
    }
}

/// A test run: the file system, the model, identities, pins.
struct Run {
    fs: Fs,
    model: Model,
    rng: Rng,
    /// Model file id to inode.
    inos: HashMap<u64, Ino>,
    pinned: Vec<(Ino, u64)>,
    /// Per operation: (successes, failures), to show the run exercised both.
    tally: [(u32, u32); 17],
}

impl Run {
    fn new(seed: u64) -> Run {
        let limits = Limits { max_file_size: MAX_FILE, max_bytes: 1 << 30, max_inodes: 1 << 20 };
        Run {
            fs: Fs::with_limits(limits),
            model: Model::new(),
            rng: Rng::new(seed),
            inos: HashMap::new(),
            pinned: vec![],
            tally: [(0, 0); 17],
        }
    }

    /// A random canonical absolute path, usually of something that exists.
    fn canonical(&mut self) -> String {
        if self.rng.below(5) < 3 {
            let keys: Vec<String> = {
                let mut k: Vec<String> = self.model.paths.keys().filter(|k| *k != "/").cloned().collect();
                k.sort();
                k
            };
            if !keys.is_empty() {
                let base = self.rng.pick(&keys).clone();
                if self.rng.chance(3) {
                    return format!("{base}/{}", self.rng.pick(&NAMES));
                }
                return base;
            }
        }
        let depth = 1 + self.rng.below(3);
        (0..depth).map(|_| format!("/{}", self.rng.pick(&NAMES))).collect()
    }

    /// The same path as the fs sees it: from a random working directory,
    /// with harmless decorations. Returns (cwd, path string).
    fn spell(&mut self, canonical: &str) -> (Ino, String) {
        let comps = components(canonical);
        let mut dirs = self.model.dirs();
        dirs.retain(|d| d != "/");
        let (cwd, mut out) = if !dirs.is_empty() && self.rng.chance(3) {
            let cwd_path = self.rng.pick(&dirs).clone();
            let cwd = self.fs.lookup(ROOT, &cwd_path).unwrap();
            if let Some(rest) = canonical.strip_prefix(&format!("{cwd_path}/")) {
                (cwd, if self.rng.chance(2) { format!("./{rest}") } else { rest.to_string() })
            } else {
                let up = "../".repeat(components(&cwd_path).len() + self.rng.below(2) as usize);
                (cwd, format!("{up}{}", comps.join("/")))
            }
        } else {
            let lead = if self.rng.chance(4) { "/../" } else { "/" };
            (if self.rng.chance(2) { ROOT } else { Ino::from_raw(u64::MAX) }, format!("{lead}{}", comps.join("/")))
        };
        if self.rng.chance(4) {
            out = out.replacen('/', "//", 1);
        }
        if self.rng.chance(4)
            && let Some(last) = out.rfind('/')
        {
            out.insert_str(last, "/.");
        }
        (cwd, out)
    }

    fn note<T, U>(&mut self, op: u64, r: &Result<T, U>) {
        let t = &mut self.tally[op as usize];
        if r.is_ok() { t.0 += 1 } else { t.1 += 1 }
    }

    fn check_ino(&mut self, id: u64, ino: Ino) {
        match self.inos.get(&id) {
            Some(&known) => assert_eq!(known, ino, "file {id} changed inode"),
            None => {
                self.inos.insert(id, ino);
            }
        }
    }

    fn step(&mut self, i: usize) {
        let op = self.rng.below(17);
        let mut p = self.canonical();
        if op == 8 && self.rng.chance(2) {
            // rmdir: often an empty directory.
            let empty: Vec<String> =
                self.model.dirs().into_iter().filter(|d| d != "/" && self.model.children(d).is_empty()).collect();
            if !empty.is_empty() {
                p = self.rng.pick(&empty).clone();
            }
        }
        let (cwd, sp) = self.spell(&p);
        let offset = if self.rng.chance(10) { MAX_FILE - 5 + self.rng.below(10) } else { self.rng.below(3000) };
        let len = self.rng.below(700) as usize;
        let data = self.rng.bytes(len);
        match op {
            0 | 1 => {
                let want = self.model.create(&p, true, false);
                self.note(op, &want);
                let got = self.fs.create(cwd, &sp, Kind::File);
                assert_eq!(got.is_ok(), want.is_ok(), "#{i} create {sp}: {got:?} vs {want:?}");
                match (want, got) {
                    (Ok(id), Ok(ino)) => self.check_ino(id, ino),
                    (w, g) => assert_eq!(w.unwrap_err(), g.unwrap_err(), "#{i} create {sp}"),
                }
            }
            2 => {
                let truncate = self.rng.chance(2);
                let want = self.model.create(&p, false, truncate);
                self.note(op, &want);
                let flags = OpenFlags { truncate, ..CREATE };
                let got = self.fs.open(cwd, &sp, flags);
                match (want, got) {
                    (Ok(id), Ok(ino)) => self.check_ino(id, ino),
                    (w, g) => assert_eq!(w.err(), g.err(), "#{i} open {sp}"),
                }
            }
            3 => {
                let want = self.model.mkdir(&p);
                self.note(op, &want);
                assert_eq!(want, self.fs.mkdir(cwd, &sp).map(|_| ()), "#{i} mkdir {sp}");
            }
            4 => {
                let want = self.model.lookup(&p, false).and_then(|n| match n {
                    Node::Dir => Err(FsError::IsADirectory),
                    Node::File(id) => self.model.write(id, offset, &data),
                });
                let got = self.fs.lookup(cwd, &sp).and_then(|ino| self.fs.write(ino, offset, &data));
                self.note(op, &want);
                assert_eq!(want, got, "#{i} write {sp} @{offset}+{len}");
            }
            5 => {
                let want = self.model.lookup(&p, false).and_then(|n| match n {
                    Node::Dir => Err(FsError::IsADirectory),
                    Node::File(id) => Ok(self.model.read(id, offset, len)),
                });
                let got = self.fs.lookup(cwd, &sp).and_then(|ino| {
                    let mut buf = vec![0xEE; len];
                    let n = self.fs.read(ino, offset, &mut buf)?;
                    buf.truncate(n);
                    Ok(buf)
                });
                self.note(op, &want);
                assert_eq!(want, got, "#{i} read {sp}");
            }
            6 => {
                let to = self.rng.below(MAX_FILE + 100);
                let want = self.model.lookup(&p, false).and_then(|n| match n {
                    Node::Dir => Err(FsError::IsADirectory),
                    Node::File(id) => self.model.truncate(id, to),
                });
                let got = self.fs.lookup(cwd, &sp).and_then(|ino| self.fs.truncate(ino, to));
                self.note(op, &want);
                assert_eq!(want, got, "#{i} truncate {sp} {to}");
            }
            7 => {
                let want = self.model.unlink(&p);
                self.note(op, &want);
                assert_eq!(want, self.fs.unlink(cwd, &sp), "#{i} unlink {sp}");
            }
            8 => {
                let want = self.model.rmdir(&p);
                self.note(op, &want);
                assert_eq!(want, self.fs.rmdir(cwd, &sp), "#{i} rmdir {sp}");
            }
            9 | 10 => {
                let q = self.canonical();
                let (cwd2, sq) = self.spell(&q);
                let want = self.model.rename(&p, &q);
                let got = if cwd == cwd2 || self.rng.chance(2) && sq.starts_with('/') {
                    self.fs.rename(cwd, &sp, &sq)
                } else {
                    self.fs.rename_at(cwd, &sp, cwd2, &sq)
                };
                self.note(op, &want);
                assert_eq!(want, got, "#{i} rename {sp} {sq}");
            }
            11 => {
                let slash = self.rng.chance(3);
                let want = self.model.lookup(&p, slash).map(|n| match n {
                    Node::Dir => Kind::Dir,
                    Node::File(_) => Kind::File,
                });
                let sp = if slash { format!("{sp}/") } else { sp };
                let got = self.fs.lookup(cwd, &sp).map(|ino| self.fs.stat(ino).unwrap().kind);
                self.note(op, &want);
                assert_eq!(want, got, "#{i} lookup {sp}");
            }
            12 => {
                let want = self.model.lookup(&p, false).map(|n| {
                    let size = match n {
                        Node::Dir => self.model.children(&p).len() as u64,
                        Node::File(id) => self.model.data[&id].len() as u64,
                    };
                    (size, self.model.nlink(&p, n))
                });
                let got = self.fs.lookup(cwd, &sp).map(|ino| {
                    let st = self.fs.stat(ino).unwrap();
                    (st.size, st.nlink)
                });
                self.note(op, &want);
                assert_eq!(want, got, "#{i} stat {sp}");
            }
            13 => {
                let want = self.model.lookup(&p, false).and_then(|n| match n {
                    Node::Dir => Ok(self
                        .model
                        .children(&p)
                        .iter()
                        .map(|(name, n)| (name.to_string(), if *n == Node::Dir { Kind::Dir } else { Kind::File }))
                        .collect::<Vec<_>>()),
                    Node::File(_) => Err(FsError::NotADirectory),
                });
                let got = self.fs.lookup(cwd, &sp).and_then(|ino| {
                    Ok(self
                        .fs
                        .readdir(ino)?
                        .into_iter()
                        .map(|e| (String::from_utf8(e.name).unwrap(), e.kind))
                        .collect::<Vec<_>>())
                });
                self.note(op, &want);
                assert_eq!(want, got, "#{i} readdir {sp}");
            }
            14 => {
                let files = self.model.files();
                if !files.is_empty() {
                    let f = self.rng.pick(&files).clone();
                    let Node::File(id) = self.model.paths[&f] else { unreachable!() };
                    let ino = self.fs.lookup(ROOT, &f).unwrap();
                    self.check_ino(id, ino);
                    self.fs.pin(ino).unwrap();
                    self.pinned.push((ino, id));
                }
            }
            15 => {
                if !self.pinned.is_empty() {
                    let k = self.rng.below(self.pinned.len() as u64) as usize;
                    let (ino, id) = self.pinned.swap_remove(k);
                    self.fs.unpin(ino).unwrap();
                    let linked = self.model.paths.values().any(|n| *n == Node::File(id));
                    let pinned = self.pinned.iter().any(|&(_, j)| j == id);
                    assert_eq!(self.fs.is_live(ino), linked || pinned, "#{i} unpin");
                    if !linked && !pinned {
                        self.model.data.remove(&id);
                        self.inos.remove(&id);
                    }
                }
            }
            _ => {
                if !self.pinned.is_empty() {
                    let &(ino, id) = self.rng.pick(&self.pinned);
                    if self.rng.chance(2) {
                        assert_eq!(self.model.write(id, offset, &data), self.fs.write(ino, offset, &data), "#{i}");
                    } else {
                        let mut buf = vec![0; len];
                        let n = self.fs.read(ino, offset, &mut buf).unwrap();
                        assert_eq!(&buf[..n], self.model.read(id, offset, len), "#{i} pinned read");
                    }
                    let linked = self.model.paths.values().filter(|n| **n == Node::File(id)).count() as u64;
                    assert_eq!(self.fs.stat(ino).unwrap().nlink, linked);
                }
            }
        }
        // Unlinked, unpinned files are gone from the model's identity map.
        let live: Vec<u64> = self.inos.keys().copied().collect();
        for id in live {
            let linked = self.model.paths.values().any(|n| *n == Node::File(id));
            let pinned = self.pinned.iter().any(|&(_, j)| j == id);
            if !linked && !pinned {
                assert!(!self.fs.is_live(self.inos[&id]), "#{i} file {id} leaked");
                self.inos.remove(&id);
                self.model.data.remove(&id);
            }
        }
        if let Err(e) = self.fs.fsck() {
            panic!("#{i} fsck after op {op}: {e}");
        }
    }

    /// Walks the whole fs tree and compares it with the model.
    fn compare_trees(&self) {
        let mut seen = HashMap::new();
        let mut stack = vec![("/".to_string(), ROOT)];
        while let Some((path, ino)) = stack.pop() {
            seen.insert(path.clone(), ino);
            for e in self.fs.readdir(ino).unwrap() {
                let name = String::from_utf8(e.name).unwrap();
                let child = if path == "/" { format!("/{name}") } else { format!("{path}/{name}") };
                match e.kind {
                    Kind::Dir => {
                        assert_eq!(self.fs.path_of(e.ino).unwrap(), child.as_bytes());
                        assert_eq!(self.fs.parent(e.ino), Ok(ino));
                        stack.push((child, e.ino));
                    }
                    Kind::File => {
                        seen.insert(child, e.ino);
                    }
                    Kind::Symlink => panic!("the model makes no symbolic links: {child}"),
                }
            }
        }
        assert_eq!(seen.len(), self.model.paths.len());
        for (path, node) in &self.model.paths {
            let ino = seen[path];
            if let Node::File(id) = node {
                assert_eq!(self.inos[id], ino);
                assert_eq!(contents(&self.fs, ino), self.model.data[id], "{path}");
            }
        }
    }
}

fn run(seed: u64, ops: usize) {
    let mut r = Run::new(seed);
    for i in 0..ops {
        r.step(i);
        if i % 250 == 0 {
            r.compare_trees();
        }
    }
    r.compare_trees();
    if ops >= 1000 {
        eprintln!("seed {seed}: (ok, err) per op {:?}", r.tally);
        for (op, &(oks, errs)) in r.tally.iter().enumerate().take(14) {
            assert!(oks >= 10 && errs >= 10, "op {op} poorly exercised: {oks} ok, {errs} errors");
        }
    }
    // Drop every pin: everything unlinked goes, usage matches linked files.
    for (ino, _) in std::mem::take(&mut r.pinned) {
        r.fs.unpin(ino).unwrap();
    }
    r.fs.fsck().unwrap();
    let files = r.model.files().len();
    let dirs = r.model.dirs().len();
    assert_eq!(r.fs.statfs().inodes, files + dirs);
}

#[test]
fn model_seed_1() {
    run(1, 4000);
}

#[test]
fn model_seed_2() {
    run(0x5eed, 4000);
}

#[test]
fn model_many_short_runs() {
    for seed in 100..140 {
        run(seed, 300);
    }
}
