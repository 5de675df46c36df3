//! What a crash state must still show: everything the last `sync` made
//! durable and every file an `fsync` made durable, minus what operations
//! begun since may have changed. A rename keeps its content under the old
//! name or the new one; a link never endangers the original name.

use std::collections::BTreeMap;

use super::model::{Model, Node, under};
use super::workload::Op;

/// One expectation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// A directory exists.
    Dir,
    /// A file with exactly these bytes, under one of these paths.
    File(Vec<String>, Vec<u8>),
}

/// Expectations by key path.
pub type Facts = BTreeMap<String, Expect>;

/// One step of a recorded run.
#[derive(Clone, Debug)]
pub struct Step {
    /// Events recorded before it started.
    pub start: usize,
    /// Events recorded when it ended.
    pub end: usize,
    /// Paths it may have changed (a directory covers its subtree), and for
    /// a rename the (from, to) pair.
    pub touched: Vec<String>,
    /// A rename that succeeded.
    pub renamed: Option<(String, String)>,
    /// What it made durable (a sync: the whole tree; an fsync: one file).
    pub durable: Facts,
}

/// The facts a finished `sync` guarantees: the whole model.
pub fn all_facts(m: &Model) -> Facts {
    let mut f = Facts::new();
    for (p, n) in &m.nodes {
        let e = match n {
            Node::Dir => Expect::Dir,
            Node::File(i) => Expect::File(vec![p.clone()], m.files.get(*i).cloned().unwrap_or_default()),
        };
        f.insert(p.clone(), e);
    }
    f
}

/// The facts a finished `fsync(p)` guarantees (a directory: that it exists).
pub fn file_facts(m: &Model, p: &str) -> Facts {
    let mut f = Facts::new();
    if let Some(c) = m.file(p).and_then(|i| m.files.get(i)) {
        f.insert(p.to_string(), Expect::File(vec![p.to_string()], c.clone()));
    } else if m.nodes.get(p) == Some(&Node::Dir) {
        f.insert(p.to_string(), Expect::Dir);
    }
    f
}

/// The step of `op`, which ran over events `start..end` and left the
/// model `m` (`ok`: it succeeded; `before`: [`touched`] on the model before
/// it ran).
pub fn step_of(m: &Model, op: &Op, ok: bool, before: Vec<String>, start: usize, end: usize) -> Step {
    let durable = match (ok, op) {
        (true, Op::Sync) => all_facts(m),
        (true, Op::Fsync(p)) => file_facts(m, p),
        _ => Facts::new(),
    };
    let renamed = match (ok, op) {
        (true, Op::Rename(a, b)) => Some((a.to_string(), b.to_string())),
        _ => None,
    };
    let touched = if ok { before } else { Vec::new() };
    Step { start, end, touched, renamed, durable }
}

/// The paths `op` may change, judged on the model before it ran.
pub fn touched(m: &Model, op: &Op) -> Vec<String> {
    match *op {
        Op::Create(p) | Op::Mkdir(p) | Op::Unlink(p) => vec![p.to_string()],
        Op::Write(p, ..) | Op::Append(p, _) | Op::Truncate(p, _) => m.aliases(p),
        Op::Rename(a, b) => vec![a.to_string(), b.to_string()],
        Op::Link(_, b) => vec![b.to_string()],
        Op::Fsync(_) | Op::Sync => Vec::new(),
    }
}

/// The expectations for a crash state whose durable prefix is the first
/// `base` events and whose window (writes that may or may not have
/// landed) ends at event `window`.
pub fn expect(steps: &[Step], base: usize, window: usize) -> Facts {
    let mut facts = Facts::new();
    for s in steps {
        if s.start >= window && s.start > base {
            break;
        }
        let renamed = s.renamed.as_ref();
        let mut next = Facts::new();
        for (k, e) in facts {
            let Expect::File(paths, c) = &e else {
                if !s.touched.iter().any(|t| under(&k, t)) {
                    next.insert(k, e);
                }
                continue;
            };
            match renamed {
                Some((a, b)) if paths.iter().any(|p| under(p, a)) && !paths.iter().any(|p| under(p, b)) => {
                    let mut ps = paths.clone();
                    for p in paths.iter().filter(|p| under(p, a)) {
                        ps.push(format!("{b}{}", &p[a.len()..]));
                    }
                    next.insert(k, Expect::File(ps, c.clone()));
                }
                _ if paths.iter().any(|p| s.touched.iter().any(|t| under(p, t))) => {}
                _ => {
                    next.insert(k, e);
                }
            }
        }
        facts = next;
        if s.end <= base {
            for (k, e) in &s.durable {
                facts.insert(k.clone(), e.clone());
            }
        }
    }
    facts
}
