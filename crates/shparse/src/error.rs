//! Syntax and expansion errors, with the byte offset where they were found.

use core::fmt;

/// A control operator, as named in errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `|`
    Pipe,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `;`
    Semi,
    /// `&`
    Amp,
    /// A newline (separates commands like `;`).
    Newline,
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operator::Pipe => "`|`",
            Operator::And => "`&&`",
            Operator::Or => "`||`",
            Operator::Semi => "`;`",
            Operator::Amp => "`&`",
            Operator::Newline => "newline",
        })
    }
}

/// Shell syntax this language reserves but does not implement. Rejected so
/// that adding it later cannot change the meaning of an accepted line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unsupported {
    /// `(` or `)`.
    Subshell,
    /// `` `..` `` or `$(..)`.
    CommandSubstitution,
    /// `<<`.
    HereDocument,
    /// `<>`.
    ReadWrite,
    /// `>|`.
    Clobber,
    /// `&>`; write `>file 2>&1`.
    AmpRedirect,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unsupported::Subshell => "subshells `( )` are not supported",
            Unsupported::CommandSubstitution => "command substitution is not supported",
            Unsupported::HereDocument => "here-documents `<<` are not supported",
            Unsupported::ReadWrite => "`<>` is not supported",
            Unsupported::Clobber => "`>|` is not supported",
            Unsupported::AmpRedirect => "`&>` is not supported; use `>file 2>&1`",
        })
    }
}

/// What is wrong with a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// `'` without its closing `'` (at the opening quote). Incomplete.
    UnterminatedSingleQuote,
    /// `"` without its closing `"` (at the opening quote). Incomplete.
    UnterminatedDoubleQuote,
    /// A `\` as the last character of the input. Incomplete.
    TrailingBackslash,
    /// `${` without `}` (at the `$`).
    UnterminatedBrace,
    /// `${...}` whose contents are not a parameter name (at the `$`).
    BadSubstitution,
    /// A redirection operator not followed by a word (at the operator).
    MissingRedirectTarget,
    /// An fd number that does not fit in `u32`, or a `>&`/`<&` target
    /// that is not plain digits (at the number or the target).
    BadFd,
    /// A pipe followed by another operator, as in `a | | b` (at that
    /// operator).
    EmptyPipelineStage,
    /// The input ends right after this operator (at the operator).
    /// Incomplete.
    TrailingOperator(Operator),
    /// This operator appears where a command must start, as in `; a`,
    /// `a ;; b` or `a && || b` (at the operator).
    UnexpectedOperator(Operator),
    /// Reserved syntax (at its first character).
    Unsupported(Unsupported),
    /// A NUL character: arguments are passed as C strings.
    NulByte,
    /// A compound command (`if`, `while`, `until`, `for`) is not closed:
    /// this keyword is still expected (at the end of the input). Incomplete.
    MissingKeyword(&'static str),
    /// This keyword where it cannot stand, as in `fi` without `if` or
    /// `for 1 in` (at the keyword).
    UnexpectedKeyword(&'static str),
    /// Compound commands nested deeper than the parser allows (at the
    /// keyword that would go deeper).
    TooDeep,
    /// `()` anywhere but right after the name that starts a command, as in
    /// `echo f()` (at the `()`).
    MisplacedFunction,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::UnterminatedSingleQuote => f.write_str("unterminated single quote"),
            ErrorKind::UnterminatedDoubleQuote => f.write_str("unterminated double quote"),
            ErrorKind::TrailingBackslash => f.write_str("backslash at end of input"),
            ErrorKind::UnterminatedBrace => f.write_str("`${` without `}`"),
            ErrorKind::BadSubstitution => f.write_str("bad substitution"),
            ErrorKind::MissingRedirectTarget => f.write_str("missing redirection target"),
            ErrorKind::BadFd => f.write_str("bad file descriptor number"),
            ErrorKind::EmptyPipelineStage => f.write_str("empty pipeline stage"),
            ErrorKind::TrailingOperator(op) => write!(f, "missing command after {op}"),
            ErrorKind::UnexpectedOperator(op) => write!(f, "unexpected {op}"),
            ErrorKind::Unsupported(what) => what.fmt(f),
            ErrorKind::NulByte => f.write_str("NUL character in input"),
            ErrorKind::MissingKeyword(kw) => write!(f, "missing `{kw}`"),
            ErrorKind::UnexpectedKeyword(kw) => write!(f, "unexpected `{kw}`"),
            ErrorKind::TooDeep => write!(f, "compound commands nested more than {} deep", crate::script::MAX_DEPTH),
            ErrorKind::MisplacedFunction => f.write_str("`()` only follows a function's name: NAME() { commands; }"),
        }
    }
}

/// A syntax error at byte offset `pos` of the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParseError {
    /// Byte offset in the line; always `<= line.len()` and on a character
    /// boundary.
    pub pos: usize,
    /// What went wrong.
    pub kind: ErrorKind,
}

impl ParseError {
    /// Whether more input could complete the line (an open quote, a
    /// trailing `\`, `|`, `&&` or `||`, an open compound command). An
    /// interactive shell may read a continuation line and parse
    /// `line + "\n" + more` again.
    pub fn is_incomplete(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::UnterminatedSingleQuote
                | ErrorKind::UnterminatedDoubleQuote
                | ErrorKind::TrailingBackslash
                | ErrorKind::TrailingOperator(_)
                | ErrorKind::MissingKeyword(_)
        )
    }

    /// The error's column in `line`, counted in characters from 0 (for a
    /// caret under the line). `line` should be the string that was parsed.
    pub fn column(&self, line: &str) -> usize {
        column(line, self.pos)
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "syntax error at byte {}: {}", self.pos, self.kind)
    }
}

/// An expansion failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExpandError {
    /// An unquoted redirection target expanded to nothing (`> $UNSET`);
    /// `pos` is the target word's start.
    AmbiguousRedirect {
        /// Byte offset of the target word in the line.
        pos: usize,
    },
}

impl ExpandError {
    /// Byte offset in the line.
    pub fn pos(&self) -> usize {
        match *self {
            ExpandError::AmbiguousRedirect { pos } => pos,
        }
    }
}

impl fmt::Display for ExpandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpandError::AmbiguousRedirect { pos } => write!(f, "ambiguous redirect at byte {pos}"),
        }
    }
}

/// Characters of `line` before byte `pos` (clamped to the line).
fn column(line: &str, pos: usize) -> usize {
    let pos = pos.min(line.len());
    line.char_indices().take_while(|&(i, _)| i < pos).count()
}
