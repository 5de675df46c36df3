//! Tab completion at the prompt: the word before the cursor is completed
//! as a command (built-ins and the programs of the boot archive) where a
//! command starts, else as a path of the file server. One match is
//! completed (with a space after a name and a file, `/` after a
//! directory); several are extended to their common start, or listed when
//! they have none beyond what was typed.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use oxok_libos::fs::{self, FileKind};

/// What Tab does to the line.
pub enum Completion {
    /// Type these bytes (the rest of the word, and a space or `/`).
    Insert(String),
    /// Several candidates and nothing to add: show them.
    List(Vec<String>),
    /// No candidate.
    Nothing,
}

/// Completes the end of `line`.
pub fn complete(line: &str) -> Completion {
    let start = line.rfind([' ', '|', ';', '&', '<', '>']).map_or(0, |i| i + 1);
    let word = &line[start..];
    let before = line[..start].trim_end();
    let command_position = before.is_empty() || before.ends_with(['|', ';', '&']);
    let candidates: Vec<(String, bool)> = if command_position && !word.contains('/') {
        commands().into_iter().filter(|c| c.starts_with(word)).map(|c| (c, false)).collect()
    } else {
        paths(word)
    };
    let typed = match word.rfind('/') {
        Some(i) if !command_position || word.contains('/') => &word[i + 1..],
        _ => word,
    };
    match candidates.as_slice() {
        [] => Completion::Nothing,
        [(only, dir)] => {
            let mut rest = only[typed.len().min(only.len())..].to_string();
            rest.push(if *dir { '/' } else { ' ' });
            Completion::Insert(rest)
        }
        many => {
            let common = common_prefix(many.iter().map(|(c, _)| c.as_str()));
            if common.len() > typed.len() {
                Completion::Insert(common[typed.len()..].to_string())
            } else {
                Completion::List(
                    many.iter().map(|(c, d)| if *d { alloc::format!("{c}/") } else { c.clone() }).collect(),
                )
            }
        }
    }
}

/// Built-ins and programs, sorted, without repeats.
fn commands() -> Vec<String> {
    let mut all: Vec<String> = crate::builtins::names().iter().map(|n| n.to_string()).collect();
    if let Some(archive) = oxok_libos::exposed::boot_archive() {
        all.extend(oxok_archive::Archive::new(archive).entries().flatten().map(|e| e.name.to_string()));
    }
    all.sort();
    all.dedup();
    all
}

/// Entries of the directory `word` names that start with its last part:
/// (name, is a directory).
fn paths(word: &str) -> Vec<(String, bool)> {
    let (dir, prefix) = match word.rfind('/') {
        Some(0) => ("/", &word[1..]),
        Some(i) => (&word[..i], &word[i + 1..]),
        None => (".", word),
    };
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<(String, bool)> = entries
        .into_iter()
        .filter(|e| e.name.starts_with(prefix) && e.name != "." && e.name != "..")
        .map(|e| (e.name, e.kind == FileKind::Dir))
        .collect();
    found.sort();
    found
}

/// The longest common start of `words` (on character boundaries).
fn common_prefix<'a>(mut words: impl Iterator<Item = &'a str>) -> String {
    let Some(first) = words.next() else { return String::new() };
    let mut prefix = first;
    for w in words {
        let n: usize = prefix.chars().zip(w.chars()).take_while(|(a, b)| a == b).map(|(a, _)| a.len_utf8()).sum();
        prefix = &prefix[..n];
    }
    String::from(prefix)
}
