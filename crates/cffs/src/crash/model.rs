//! The reference model: a tree of paths, files by identity (so hard links
//! share contents), with the same success rules as the file system.

use std::collections::BTreeMap;

/// A node of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    /// A directory.
    Dir,
    /// A file: index into [`Model::files`].
    File(usize),
}

/// The model tree; `/` is implicit.
#[derive(Clone, Debug, Default)]
pub struct Model {
    /// Every path but `/`.
    pub nodes: BTreeMap<String, Node>,
    /// File contents by identity.
    pub files: Vec<Vec<u8>>,
}

/// `path`'s parent (`/` for a top-level name).
pub fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// Whether `x` is `p` or below it.
pub fn under(x: &str, p: &str) -> bool {
    x == p || (x.starts_with(p) && x.as_bytes().get(p.len()) == Some(&b'/'))
}

impl Model {
    fn is_dir(&self, p: &str) -> bool {
        p == "/" || self.nodes.get(p) == Some(&Node::Dir)
    }

    /// The file at `p`.
    pub fn file(&self, p: &str) -> Option<usize> {
        match self.nodes.get(p) {
            Some(Node::File(i)) => Some(*i),
            _ => None,
        }
    }

    /// Paths naming the same file as `p` (with `p`).
    pub fn aliases(&self, p: &str) -> Vec<String> {
        let Some(id) = self.file(p) else { return vec![p.to_string()] };
        self.nodes.iter().filter(|(_, n)| **n == Node::File(id)).map(|(k, _)| k.clone()).collect()
    }

    fn can_add(&self, p: &str) -> bool {
        self.is_dir(parent(p)) && !self.nodes.contains_key(p) && p != "/"
    }

    /// `create`.
    pub fn create(&mut self, p: &str) -> bool {
        if !self.can_add(p) {
            return false;
        }
        self.files.push(Vec::new());
        self.nodes.insert(p.to_string(), Node::File(self.files.len() - 1));
        true
    }

    /// `mkdir`.
    pub fn mkdir(&mut self, p: &str) -> bool {
        self.can_add(p) && self.nodes.insert(p.to_string(), Node::Dir).is_none()
    }

    /// `write`.
    pub fn write(&mut self, p: &str, off: usize, data: &[u8]) -> bool {
        let Some(f) = self.file(p).and_then(|i| self.files.get_mut(i)) else { return false };
        if f.len() < off + data.len() {
            f.resize(off + data.len(), 0);
        }
        f[off..off + data.len()].copy_from_slice(data);
        true
    }

    /// `truncate`.
    pub fn truncate(&mut self, p: &str, len: usize) -> bool {
        let Some(f) = self.file(p).and_then(|i| self.files.get_mut(i)) else { return false };
        f.resize(len, 0);
        true
    }

    fn children(&self, p: &str) -> bool {
        self.nodes.keys().any(|k| k != p && under(k, p))
    }

    /// `unlink` (files and empty directories).
    pub fn unlink(&mut self, p: &str) -> bool {
        if !self.nodes.contains_key(p) || self.children(p) {
            return false;
        }
        self.nodes.remove(p);
        true
    }

    /// `link`.
    pub fn link(&mut self, a: &str, b: &str) -> bool {
        let Some(id) = self.file(a) else { return false };
        if !self.can_add(b) {
            return false;
        }
        self.nodes.insert(b.to_string(), Node::File(id));
        true
    }

    /// `rename`.
    pub fn rename(&mut self, a: &str, b: &str) -> bool {
        let Some(&na) = self.nodes.get(a) else { return false };
        if !self.is_dir(parent(b)) || b == "/" {
            return false;
        }
        if na == Node::Dir && under(b, a) && a != b {
            return false;
        }
        if let Some(&nb) = self.nodes.get(b) {
            if nb == na && (a == b || matches!(na, Node::File(_))) {
                return true;
            }
            match (na, nb) {
                (Node::Dir, Node::File(_)) | (Node::File(_), Node::Dir) => return false,
                (Node::Dir, Node::Dir) if self.children(b) => return false,
                _ => {}
            }
            self.nodes.remove(b);
        }
        let moved: Vec<(String, Node)> =
            self.nodes.iter().filter(|(k, _)| under(k, a)).map(|(k, n)| (k.clone(), *n)).collect();
        for (k, n) in moved {
            self.nodes.remove(&k);
            self.nodes.insert(format!("{b}{}", &k[a.len()..]), n);
        }
        true
    }

    /// Whether `p` exists (`/` always does).
    pub fn exists(&self, p: &str) -> bool {
        p == "/" || self.nodes.contains_key(p)
    }
}
