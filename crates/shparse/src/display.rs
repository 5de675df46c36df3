//! Writing a tree back as shell text (`Display`), for traces, job lists and
//! error messages.
//!
//! The output is canonical: one space between words, `; `, ` & `, ` | `,
//! ` && `, ` || ` between commands, redirections after the arguments,
//! `${NAME}` for parameters, and single quotes around any text that needs
//! them. For a tree produced by [`parse`](crate::parse), parsing the output
//! gives the same tree again (spans aside); for an expanded tree it gives a
//! tree that expands to the same strings.

use alloc::string::String;
use core::fmt::{self, Display, Formatter, Write};

use crate::ast::{AndOr, Connector, Item, List, Part, Pipeline, Redirect, Simple, Target, Word};
use crate::lexer::is_name;

/// Where a word is written, which decides what it must quote.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// A word of its own (an argument, a redirection target): a leading
    /// `#` would start a comment.
    Word,
    /// `argv[0]`: in addition, `NAME=...` would read as an assignment.
    CommandName,
    /// Right after `NAME=`: neither applies.
    Value,
}

/// A word type that can be written back as shell text: [`Word`] and
/// `String`.
pub trait ShellText {
    /// Writes the word so that, at `place`, it reads back as one word with
    /// the same meaning.
    fn write_shell(&self, f: &mut dyn Write, place: Place) -> fmt::Result;
}

/// Whether `text` can be written unquoted as a literal part of a word.
///
/// `at_start`: it begins the word (so `#` would start a comment).
/// `command_name`: it begins `argv[0]` (so `NAME=` would be an assignment).
fn plain_ok(text: &str, at_start: bool, command_name: bool) -> bool {
    let b = text.as_bytes();
    if b.is_empty() || (at_start && b[0] == b'#') {
        return false;
    }
    let special = |c: &u8| {
        matches!(
            c,
            b' ' | b'\t'
                | b'\n'
                | b'|'
                | b'&'
                | b';'
                | b'<'
                | b'>'
                | b'('
                | b')'
                | b'\''
                | b'"'
                | b'\\'
                | b'`'
                | b'$'
                | 0
        )
    };
    if b.iter().any(special) {
        return false;
    }
    !(command_name && looks_assigned(text))
}

/// Whether `text` starts with `NAME=`.
fn looks_assigned(text: &str) -> bool {
    text.find('=').is_some_and(|eq| is_name(&text[..eq]))
}

/// `'text'`, with each `'` written as `'\''`.
fn write_single_quoted(f: &mut dyn Write, text: &str) -> fmt::Result {
    f.write_char('\'')?;
    for (i, piece) in text.split('\'').enumerate() {
        if i > 0 {
            f.write_str("'\\''")?;
        }
        f.write_str(piece)?;
    }
    f.write_char('\'')
}

impl ShellText for Word {
    fn write_shell(&self, f: &mut dyn Write, place: Place) -> fmt::Result {
        let mut at_start = place != Place::Value;
        let command_name = place == Place::CommandName;
        let is_quoted = |p: &Part| matches!(p, Part::Lit { quoted: true, .. } | Part::Var { quoted: true, .. });
        // A quoted word needs visible quoting; a leading `''` also keeps a
        // plain `#` from starting a comment and `NAME=` from assigning.
        let leading_plain = match self.parts.first() {
            Some(Part::Lit { text, quoted: false }) => {
                (at_start && text.starts_with('#')) || (command_name && looks_assigned(text))
            }
            _ => false,
        };
        if self.quoted && (leading_plain || !self.parts.iter().any(is_quoted)) {
            f.write_str("''")?;
            at_start = false;
        }
        for part in &self.parts {
            match part {
                Part::Lit { text, quoted: false } => {
                    if plain_ok(text, at_start, command_name && at_start) {
                        f.write_str(text)?;
                    } else {
                        write_single_quoted(f, text)?;
                    }
                }
                Part::Lit { text, quoted: true } => write_single_quoted(f, text)?,
                Part::Var { name, quoted: false } => write!(f, "${{{name}}}")?,
                Part::Var { name, quoted: true } => write!(f, "\"${{{name}}}\"")?,
            }
            at_start = false;
        }
        Ok(())
    }
}

impl ShellText for String {
    fn write_shell(&self, f: &mut dyn Write, place: Place) -> fmt::Result {
        if plain_ok(self, place != Place::Value, place == Place::CommandName) {
            f.write_str(self)
        } else {
            write_single_quoted(f, self)
        }
    }
}

impl Display for Word {
    /// As an argument ([`Place::Word`]).
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.write_shell(f, Place::Word)
    }
}

impl<W: ShellText> Display for Redirect<W> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (op, default, word) = match &self.target {
            Target::Read(w) => ("<", 0, Some(w)),
            Target::Write(w) => (">", 1, Some(w)),
            Target::Append(w) => (">>", 1, Some(w)),
            Target::Dup(_) if self.fd == 0 => ("<&", 0, None),
            Target::Dup(_) => (">&", 1, None),
        };
        if self.fd != default {
            write!(f, "{}", self.fd)?;
        }
        f.write_str(op)?;
        match (word, &self.target) {
            (Some(w), _) => w.write_shell(f, Place::Word),
            (None, Target::Dup(n)) => write!(f, "{n}"),
            (None, _) => Ok(()),
        }
    }
}

impl<W: ShellText> Display for Simple<W> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        for (name, value) in &self.assignments {
            write!(f, "{sep}{name}=")?;
            value.write_shell(f, Place::Value)?;
            sep = " ";
        }
        for (i, w) in self.argv.iter().enumerate() {
            f.write_str(sep)?;
            w.write_shell(f, if i == 0 { Place::CommandName } else { Place::Word })?;
            sep = " ";
        }
        for r in &self.redirects {
            write!(f, "{sep}{r}")?;
            sep = " ";
        }
        Ok(())
    }
}

impl<W: ShellText> Display for Pipeline<W> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (i, c) in self.commands.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            c.fmt(f)?;
        }
        Ok(())
    }
}

impl Display for Connector {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Connector::And => "&&",
            Connector::Or => "||",
        })
    }
}

impl<W: ShellText> Display for AndOr<W> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.first.fmt(f)?;
        for (c, p) in &self.rest {
            write!(f, " {c} {p}")?;
        }
        Ok(())
    }
}

impl<W: ShellText> Display for Item<W> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.and_or.fmt(f)?;
        if self.background {
            f.write_str(" &")?;
        }
        Ok(())
    }
}

impl<W: ShellText> Display for List<W> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                let prev = &self.items[i - 1];
                f.write_str(if prev.background { " " } else { "; " })?;
            }
            item.fmt(f)?;
        }
        Ok(())
    }
}
