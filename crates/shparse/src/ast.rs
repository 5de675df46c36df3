//! The syntax tree: a [`List`] of [`AndOr`]s of [`Pipeline`]s of
//! [`Simple`] commands.
//!
//! Every node is generic over its word type `W`. [`parse`](crate::parse)
//! produces a tree of unexpanded [`Word`]s (the alias [`Command`]);
//! [`expand`](crate::expand) and the `expand` methods turn it into a tree of
//! `String`s, which is the default (`Simple` means `Simple<String>`), so an
//! expanded simple command is exactly
//! `Simple { argv: Vec<String>, redirects: Vec<Redirect>, assignments: Vec<(String, String)> }`.

use alloc::string::String;
use alloc::vec::Vec;

/// A byte range `start..end` of the parsed line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// Offset of the first byte.
    pub start: usize,
    /// Offset one past the last byte.
    pub end: usize,
}

/// One piece of a [`Word`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// Literal text, after quote removal. Never empty in a word built with
    /// [`Word::push_lit`].
    Lit {
        /// The characters.
        text: String,
        /// Whether they were quoted (`'..'`, `".."` or `\x`). Quoted text
        /// never forms an assignment name, an fd number or a comment.
        quoted: bool,
    },
    /// A parameter: `$NAME`, `${NAME}`, or a special one: `$?`, `$$`, `$#`,
    /// `$!`, `$*`, `$@`, `$0`..`$9` (`${10}` for more digits). `name` is
    /// what the lookup receives (`"?"` for `$?`).
    Var {
        /// The parameter name without `$` and braces.
        name: String,
        /// Whether it appeared inside double quotes.
        quoted: bool,
    },
}

/// A word before expansion: literal text and parameters, concatenated.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Word {
    /// The pieces, in order. Adjacent literals with the same `quoted` flag
    /// are merged; there are no empty literals.
    pub parts: Vec<Part>,
    /// Whether any quoting appeared in the word (even `""`). An unquoted
    /// word that expands to nothing is dropped from argv; a quoted one
    /// becomes an empty argument.
    pub quoted: bool,
    /// Where the word is in the line.
    pub span: Span,
}

impl Word {
    /// An empty, unquoted word at `span`.
    pub fn new(span: Span) -> Word {
        Word { parts: Vec::new(), quoted: false, span }
    }

    /// A word of one unquoted literal (handy for building commands).
    pub fn literal(text: &str) -> Word {
        let mut w = Word::default();
        w.push_lit(text, false);
        w
    }

    /// Appends literal text, merging it with a preceding literal of the same
    /// kind. Quoted text marks the word quoted even when empty.
    pub fn push_lit(&mut self, text: &str, quoted: bool) {
        self.quoted |= quoted;
        if text.is_empty() {
            return;
        }
        if let Some(Part::Lit { text: last, quoted: q }) = self.parts.last_mut()
            && *q == quoted
        {
            last.push_str(text);
            return;
        }
        self.parts.push(Part::Lit { text: String::from(text), quoted });
    }

    /// Appends a parameter reference.
    pub fn push_var(&mut self, name: &str, quoted: bool) {
        self.quoted |= quoted;
        self.parts.push(Part::Var { name: String::from(name), quoted });
    }

    /// The text if the word is plain unquoted literal text (no parameters,
    /// no quoting), such as the fd in `2>&1`.
    pub fn as_plain(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Lit { text, quoted: false }] if !self.quoted => Some(text),
            _ => None,
        }
    }

    /// Whether the word contains a parameter reference.
    pub fn has_vars(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Var { .. }))
    }
}

/// What a redirection does to its file descriptor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target<W = String> {
    /// `< file`: open for reading.
    Read(W),
    /// `> file`: create or truncate, open for writing.
    Write(W),
    /// `>> file`: create or append.
    Append(W),
    /// `>&n` or `<&n`: make the descriptor a copy of descriptor `n`.
    Dup(u32),
}

/// One redirection, `fd` op target. Apply a command's redirections in order:
/// `>f 2>&1` sends both to `f`, `2>&1 >f` sends only stdout there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Redirect<W = String> {
    /// The descriptor redirected: the explicit number (`2>`), else 0 for
    /// `<` and `<&`, 1 for `>`, `>>` and `>&`.
    pub fd: u32,
    /// Where it goes.
    pub target: Target<W>,
}

/// A simple command: `NAME=value ... word ... redirection ...`, in any
/// order except that assignments come before the first word.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Simple<W = String> {
    /// `NAME=value` words before the command name.
    pub assignments: Vec<(String, W)>,
    /// The command name and its arguments (may be empty: `X=1` or `>f`).
    pub argv: Vec<W>,
    /// Redirections, in the order written.
    pub redirects: Vec<Redirect<W>>,
}

/// `a | b | c`: one or more simple commands connected by pipes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Pipeline<W = String> {
    /// The stages, left to right; never empty when parsed.
    pub commands: Vec<Simple<W>>,
}

/// How a pipeline joins the one before it in an [`AndOr`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Connector {
    /// `&&`: run if the previous status is 0.
    And,
    /// `||`: run if the previous status is not 0.
    Or,
}

/// `p1 && p2 || p3`: pipelines joined left-associatively by `&&` and `||`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AndOr<W = String> {
    /// The first pipeline; always runs.
    pub first: Pipeline<W>,
    /// The following pipelines with their connectors.
    pub rest: Vec<(Connector, Pipeline<W>)>,
}

/// One element of a [`List`]: an [`AndOr`] and whether it ended with `&`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Item<W = String> {
    /// The commands.
    pub and_or: AndOr<W>,
    /// Ended with `&` (run without waiting); the shell may refuse it.
    pub background: bool,
}

/// A whole line: items separated by `;`, `&` or newlines. Empty for a
/// blank or comment-only line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct List<W = String> {
    /// The items, in order.
    pub items: Vec<Item<W>>,
}

/// What [`parse`](crate::parse) returns: a [`List`] of unexpanded words.
pub type Command = List<Word>;

impl<W> List<W> {
    /// Whether the line had no commands (blank or only a comment).
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl<W> AndOr<W> {
    /// All pipelines in order with the connector that precedes each
    /// (`None` for the first).
    pub fn pipelines(&self) -> impl Iterator<Item = (Option<Connector>, &Pipeline<W>)> {
        core::iter::once((None, &self.first)).chain(self.rest.iter().map(|(c, p)| (Some(*c), p)))
    }
}
