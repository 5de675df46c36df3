//! Property test: random operations on the file system and on the model
//! agree on success and on the whole tree, across reboots, with fsck clean
//! after every reboot.

use oxok_cffs::crash::model::{Model, Node};
use oxok_cffs::host::MemDisk;
use oxok_cffs::{Fs, Kind, fsck};
use oxok_testrng::Rng;

const OWNER: u64 = 3;
const PATHS: [&str; 7] = ["/a", "/b", "/a/c", "/a/d", "/b/e", "/f", "/a/c/g"];

fn reboot(fs: Fs<MemDisk>) -> Fs<MemDisk> {
    let mut fs = fs;
    fs.sync().unwrap();
    let (mut d, report) = MemDisk::open(fs.into_disk().image().to_vec(), OWNER).unwrap();
    assert!(report.duplicates.is_empty() && report.unreadable.is_empty());
    let f = fsck(&mut d).unwrap();
    assert!(f.clean(), "{f:?}");
    Fs::mount(d, OWNER).unwrap().0
}

/// The file system's tree equals the model's, contents included.
fn same_tree(fs: &mut Fs<MemDisk>, m: &Model) {
    let mut seen = Vec::new();
    let mut dirs = vec![String::from("/")];
    while let Some(d) = dirs.pop() {
        for (name, kind) in fs.readdir(&d).unwrap() {
            let p = if d == "/" { format!("/{name}") } else { format!("{d}/{name}") };
            match (kind, m.nodes.get(&p)) {
                (Kind::Dir, Some(Node::Dir)) => dirs.push(p.clone()),
                (Kind::File, Some(Node::File(i))) => {
                    let want = &m.files[*i];
                    let mut buf = vec![0; want.len() + 10];
                    assert_eq!(fs.read(&p, 0, &mut buf).unwrap(), want.len(), "{p}");
                    assert_eq!(&buf[..want.len()], &want[..], "{p}");
                    assert_eq!(fs.stat(&p).unwrap().size, want.len() as u64);
                }
                other => panic!("{p}: file system {kind:?}, model {other:?}"),
            }
            seen.push(p);
        }
    }
    seen.sort();
    assert_eq!(seen, m.nodes.keys().cloned().collect::<Vec<_>>());
}

fn run(seed: u64, steps: usize) {
    let mut rng = Rng::new(seed);
    let mut fs = Fs::mkfs(MemDisk::blank(256, OWNER, 0x5a).unwrap(), OWNER).unwrap();
    let mut m = Model::default();
    for step in 0..steps {
        let p = *rng.pick(&PATHS);
        let q = *rng.pick(&PATHS);
        let (what, fs_ok, m_ok) = match rng.below(11) {
            0 => ("create", fs.create(p).is_ok(), m.create(p)),
            1 => ("mkdir", fs.mkdir(p).is_ok(), m.mkdir(p)),
            2 | 3 => {
                let off = rng.below(10_000) as usize;
                let n = rng.below(9_000) as usize + 1;
                let data = rng.bytes(n);
                ("write", fs.write(p, off as u64, &data).is_ok(), m.write(p, off, &data))
            }
            4 => {
                let len = rng.below(12_000) as usize;
                ("truncate", fs.truncate(p, len as u64).is_ok(), m.truncate(p, len))
            }
            5 => ("rename", fs.rename(p, q).is_ok(), m.rename(p, q)),
            6 => ("link", fs.link(p, q).is_ok(), m.link(p, q)),
            7 => ("unlink", fs.unlink(p).is_ok(), m.unlink(p)),
            10 => {
                let file = matches!(m.nodes.get(p), Some(Node::File(_)));
                ("unlink_file", fs.unlink_file(p).is_ok(), file && m.unlink(p))
            }
            8 => {
                fs.sync().unwrap();
                ("sync", true, true)
            }
            _ => {
                fs = reboot(fs);
                ("reboot", true, true)
            }
        };
        assert_eq!(fs_ok, m_ok, "seed {seed} step {step}: {what} {p} {q}");
        if step % 8 == 0 {
            same_tree(&mut fs, &m);
        }
    }
    let mut fs = reboot(fs);
    same_tree(&mut fs, &m);
}

#[test]
fn random_operations_agree_with_the_model() {
    for seed in 1..=40 {
        run(seed, 150);
    }
}
