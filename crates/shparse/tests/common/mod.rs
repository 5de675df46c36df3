//! Shared helpers: a deterministic PRNG, a structural dump of parse trees,
//! a fixed variable table, and an editor driver.

#![allow(dead_code)]

use oxok_shparse::{AndOr, Command, Connector, Event, LineEditor, Part, Pipeline, Redirect, Simple, Target, Word};

#[allow(unused_imports)]
pub use oxok_testrng::Rng;

/// One word, showing its structure: unquoted text raw, quoted text in
/// `'..'`, parameters as `${name}` (`"${name}"` when quoted), and a leading
/// `''` for a quoted word with no quoted part.
pub fn dump_word(w: &Word) -> String {
    let mut s = String::new();
    let any_quoted =
        w.parts.iter().any(|p| matches!(p, Part::Lit { quoted: true, .. } | Part::Var { quoted: true, .. }));
    if w.quoted && !any_quoted {
        s.push_str("''");
    }
    for p in &w.parts {
        match p {
            Part::Lit { text, quoted: false } => s.push_str(text),
            Part::Lit { text, quoted: true } => s.push_str(&format!("'{text}'")),
            Part::Var { name, quoted: false } => s.push_str(&format!("${{{name}}}")),
            Part::Var { name, quoted: true } => s.push_str(&format!("\"${{{name}}}\"")),
        }
    }
    s
}

pub fn dump_redirect(r: &Redirect<Word>) -> String {
    match &r.target {
        Target::Read(w) => format!("{}<{}", r.fd, dump_word(w)),
        Target::Write(w) => format!("{}>{}", r.fd, dump_word(w)),
        Target::Append(w) => format!("{}>>{}", r.fd, dump_word(w)),
        Target::Dup(n) => format!("{}>&{}", r.fd, n),
    }
}

/// `[(NAME=value) argv... fd<op>target...]`.
pub fn dump_simple(c: &Simple<Word>) -> String {
    let mut v: Vec<String> = c.assignments.iter().map(|(n, w)| format!("({n}={})", dump_word(w))).collect();
    v.extend(c.argv.iter().map(dump_word));
    v.extend(c.redirects.iter().map(dump_redirect));
    format!("[{}]", v.join(" "))
}

pub fn dump_pipeline(p: &Pipeline<Word>) -> String {
    p.commands.iter().map(dump_simple).collect::<Vec<_>>().join(" | ")
}

pub fn dump_and_or(a: &AndOr<Word>) -> String {
    let mut s = dump_pipeline(&a.first);
    for (c, p) in &a.rest {
        s.push_str(match c {
            Connector::And => " && ",
            Connector::Or => " || ",
        });
        s.push_str(&dump_pipeline(p));
    }
    s
}

/// `{and-or}` per item, `{..}&` for background items, separated by spaces.
pub fn dump(cmd: &Command) -> String {
    cmd.items
        .iter()
        .map(|it| format!("{{{}}}{}", dump_and_or(&it.and_or), if it.background { "&" } else { "" }))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A fixed environment: `HOME=/home`, `EMPTY=`, `SP='a b'`, `?=0`,
/// `Q='"it'\''s"'`, `D=$HOME`; everything else unset.
pub fn env(name: &str) -> Option<&'static str> {
    match name {
        "HOME" => Some("/home"),
        "EMPTY" => Some(""),
        "SP" => Some("a b"),
        "?" => Some("0"),
        "Q" => Some("\"it's\""),
        "D" => Some("$HOME"),
        "1" => Some("one"),
        "10" => Some("ten"),
        "$" => Some("42"),
        _ => None,
    }
}

/// Feeds `input` to `ed`; returns the events and everything echoed.
pub fn feed_all(ed: &mut LineEditor, input: &[u8]) -> (Vec<Event>, Vec<u8>) {
    let mut out = Vec::new();
    let events = input.iter().filter_map(|&b| ed.feed(b, &mut out)).collect();
    (events, out)
}

/// The lines a fresh editor produces from `input`.
pub fn lines(input: &[u8]) -> Vec<String> {
    let mut ed = LineEditor::new();
    feed_all(&mut ed, input)
        .0
        .into_iter()
        .filter_map(|e| match e {
            Event::Line(l) => Some(l),
            _ => None,
        })
        .collect()
}
