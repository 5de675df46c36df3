//! Splitting a line into words and operators.
//!
//! Blanks are space and tab. Unquoted, these characters end a word and
//! start an operator: newline `| & ; < > ( )`. A `#` at the start of a
//! word starts a comment that runs to the end of the line. Quoting:
//!
//! * `'...'`: everything literal up to the next `'`.
//! * `"..."`: literal except `$` (expansion) and `\`, which escapes only
//!   `"`, `\` and `$` (and joins lines before a newline); elsewhere it is a
//!   literal backslash.
//! * `\c` outside quotes: `c` literal; `\` before a newline joins lines.
//!
//! `()` is a token of its own (a function definition's); any other `(` or
//! `)` is refused (no subshells).
//!
//! `$NAME`, `${NAME}`, `$?` and the other specials become [`Part::Var`]; a
//! `$` that starts none of these is literal (and counts as quoted text). All syntax characters are
//! ASCII, so every offset where the lexer splits is a character boundary.
//!
//! [`Part::Var`]: crate::Part::Var

use crate::ast::{Span, Word};
use crate::error::{ErrorKind, Operator, ParseError, Unsupported};

/// A redirection operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RedirOp {
    /// `<`
    Read,
    /// `>`
    Write,
    /// `>>`
    Append,
    /// `<&` or `>&`; `out` tells which (for the default fd).
    Dup { out: bool },
}

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    /// A word (possibly empty but quoted, like `''`).
    Word(Word),
    /// A control operator.
    Op(Operator),
    /// A redirection operator with its explicit fd number, if any.
    Redir { fd: Option<u32>, op: RedirOp },
    /// `()`, which follows a function's name in its definition.
    Parens,
}

/// A token and the byte offset where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub pos: usize,
}

/// Creates a lexer over `line`, which is checked for NUL characters first
/// (a NUL anywhere is the error reported, whatever else is wrong).
pub(crate) fn lexer(line: &str) -> Result<Lexer<'_>, ParseError> {
    if let Some(pos) = line.bytes().position(|b| b == 0) {
        return Err(ParseError { pos, kind: ErrorKind::NulByte });
    }
    Ok(Lexer { s: line, b: line.as_bytes(), i: 0 })
}

fn err<T>(pos: usize, kind: ErrorKind) -> Result<T, ParseError> {
    Err(ParseError { pos, kind })
}

/// Ends an unquoted word.
fn is_delimiter(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'|' | b'&' | b';' | b'<' | b'>' | b'(' | b')')
}

/// May start a parameter name.
pub(crate) fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

/// May continue a parameter name.
pub(crate) fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// A parameter name: a letter or `_`, then letters, digits and `_`.
pub(crate) fn is_name(s: &str) -> bool {
    match s.as_bytes() {
        [first, rest @ ..] => is_name_start(*first) && rest.iter().all(|&c| is_name_char(c)),
        [] => false,
    }
}

/// A one-character special parameter (`$?` and friends).
pub(crate) fn is_special(b: u8) -> bool {
    matches!(b, b'?' | b'$' | b'#' | b'!' | b'*' | b'@') || b.is_ascii_digit()
}

/// Whether `name` may appear inside `${...}`.
pub(crate) fn is_braced_name(name: &str) -> bool {
    match name.as_bytes() {
        [] => false,
        [c] if is_special(*c) => true,
        b => b.iter().all(u8::is_ascii_digit) || is_name(name),
    }
}

/// Produces tokens on demand, so that the first error in the line is the
/// one reported.
pub(crate) struct Lexer<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> Option<u8> {
        self.b.get(self.i + k).copied()
    }

    /// The next token, or `None` at the end of the line.
    pub(crate) fn next_token(&mut self) -> Result<Option<Token>, ParseError> {
        while let Some(c) = self.peek(0) {
            let pos = self.i;
            match c {
                b' ' | b'\t' => self.i += 1,
                // A line continuation between words is a blank.
                b'\\' if self.peek(1) == Some(b'\n') => self.i += 2,
                b'#' => {
                    while self.peek(0).is_some_and(|c| c != b'\n') {
                        self.i += 1;
                    }
                }
                b'\n' => return Ok(Some(self.op(Operator::Newline, 1))),
                b';' => return Ok(Some(self.op(Operator::Semi, 1))),
                b'|' if self.peek(1) == Some(b'|') => return Ok(Some(self.op(Operator::Or, 2))),
                b'|' => return Ok(Some(self.op(Operator::Pipe, 1))),
                b'&' if self.peek(1) == Some(b'&') => return Ok(Some(self.op(Operator::And, 2))),
                b'&' if self.peek(1) == Some(b'>') => {
                    return err(pos, ErrorKind::Unsupported(Unsupported::AmpRedirect));
                }
                b'&' => return Ok(Some(self.op(Operator::Amp, 1))),
                b'(' if self.peek(1) == Some(b')') => {
                    self.i += 2;
                    return Ok(Some(Token { tok: Tok::Parens, pos }));
                }
                b'(' | b')' => return err(pos, ErrorKind::Unsupported(Unsupported::Subshell)),
                b'<' | b'>' => return self.redirect(None, pos).map(Some),
                b'0'..=b'9' => {
                    let digits = self.b[self.i..].iter().take_while(|b| b.is_ascii_digit()).count();
                    if matches!(self.peek(digits), Some(b'<' | b'>')) {
                        let fd = self.s[pos..pos + digits].parse::<u32>().or(err(pos, ErrorKind::BadFd))?;
                        self.i += digits;
                        return self.redirect(Some(fd), pos).map(Some);
                    }
                    return self.word().map(Some);
                }
                _ => return self.word().map(Some),
            }
        }
        Ok(None)
    }

    fn op(&mut self, op: Operator, len: usize) -> Token {
        let pos = self.i;
        self.i += len;
        Token { tok: Tok::Op(op), pos }
    }

    /// At `<` or `>`; `pos` is where the token starts (at its fd number).
    fn redirect(&mut self, fd: Option<u32>, pos: usize) -> Result<Token, ParseError> {
        let at = self.i;
        let (op, len) = match (self.peek(0), self.peek(1)) {
            (Some(b'<'), Some(b'<')) => return err(at, ErrorKind::Unsupported(Unsupported::HereDocument)),
            (Some(b'<'), Some(b'>')) => return err(at, ErrorKind::Unsupported(Unsupported::ReadWrite)),
            (Some(b'<'), Some(b'&')) => (RedirOp::Dup { out: false }, 2),
            (Some(b'<'), _) => (RedirOp::Read, 1),
            (Some(b'>'), Some(b'>')) => (RedirOp::Append, 2),
            (Some(b'>'), Some(b'|')) => return err(at, ErrorKind::Unsupported(Unsupported::Clobber)),
            (Some(b'>'), Some(b'&')) => (RedirOp::Dup { out: true }, 2),
            _ => (RedirOp::Write, 1),
        };
        self.i += len;
        Ok(Token { tok: Tok::Redir { fd, op }, pos })
    }

    /// Reads one word starting at `self.i`.
    fn word(&mut self) -> Result<Token, ParseError> {
        let start = self.i;
        let mut w = Word::new(Span::default());
        let mut run = self.i; // start of the pending unquoted literal run
        while let Some(c) = self.peek(0) {
            if is_delimiter(c) {
                break;
            }
            match c {
                b'\'' | b'"' | b'\\' | b'$' | b'`' => {
                    w.push_lit(&self.s[run..self.i], false);
                    match c {
                        b'\'' => self.single_quoted(&mut w)?,
                        b'"' => self.double_quoted(&mut w)?,
                        b'\\' => self.escape(&mut w)?,
                        b'$' => self.dollar(&mut w, false)?,
                        _ => return err(self.i, ErrorKind::Unsupported(Unsupported::CommandSubstitution)),
                    }
                    run = self.i;
                }
                _ => self.i += 1,
            }
        }
        w.push_lit(&self.s[run..self.i], false);
        w.span = Span { start, end: self.i };
        Ok(Token { tok: Tok::Word(w), pos: start })
    }

    /// At `'`.
    fn single_quoted(&mut self, w: &mut Word) -> Result<(), ParseError> {
        let open = self.i;
        let Some(len) = self.b[open + 1..].iter().position(|&b| b == b'\'') else {
            return err(open, ErrorKind::UnterminatedSingleQuote);
        };
        w.push_lit(&self.s[open + 1..open + 1 + len], true);
        self.i = open + len + 2;
        Ok(())
    }

    /// At `"`.
    fn double_quoted(&mut self, w: &mut Word) -> Result<(), ParseError> {
        let open = self.i;
        w.push_lit("", true);
        self.i += 1;
        let mut run = self.i;
        loop {
            let Some(c) = self.peek(0) else {
                return err(open, ErrorKind::UnterminatedDoubleQuote);
            };
            match c {
                b'"' => {
                    w.push_lit(&self.s[run..self.i], true);
                    self.i += 1;
                    return Ok(());
                }
                b'\\' => match self.peek(1) {
                    Some(b'"' | b'\\' | b'$') => {
                        w.push_lit(&self.s[run..self.i], true);
                        w.push_lit(&self.s[self.i + 1..self.i + 2], true);
                        self.i += 2;
                        run = self.i;
                    }
                    Some(b'\n') => {
                        w.push_lit(&self.s[run..self.i], true);
                        self.i += 2;
                        run = self.i;
                    }
                    _ => self.i += 1,
                },
                b'$' => {
                    w.push_lit(&self.s[run..self.i], true);
                    self.dollar(w, true)?;
                    run = self.i;
                }
                b'`' => return err(self.i, ErrorKind::Unsupported(Unsupported::CommandSubstitution)),
                _ => self.i += 1,
            }
        }
    }

    /// At `\` outside quotes.
    fn escape(&mut self, w: &mut Word) -> Result<(), ParseError> {
        let at = self.i;
        let Some(c) = self.s[at + 1..].chars().next() else {
            return err(at, ErrorKind::TrailingBackslash);
        };
        if c != '\n' {
            w.push_lit(&self.s[at + 1..at + 1 + c.len_utf8()], true);
        }
        self.i = at + 1 + c.len_utf8();
        Ok(())
    }

    /// At `$`.
    fn dollar(&mut self, w: &mut Word, quoted: bool) -> Result<(), ParseError> {
        let at = self.i;
        match self.peek(1) {
            Some(c) if is_name_start(c) => {
                let len = 1 + self.b[at + 2..].iter().take_while(|&&b| is_name_char(b)).count();
                w.push_var(&self.s[at + 1..at + 1 + len], quoted);
                self.i = at + 1 + len;
            }
            Some(c) if is_special(c) => {
                w.push_var(&self.s[at + 1..at + 2], quoted);
                self.i = at + 2;
            }
            Some(b'{') => {
                let Some(len) = self.b[at + 2..].iter().position(|&b| b == b'}') else {
                    return err(at, ErrorKind::UnterminatedBrace);
                };
                let name = &self.s[at + 2..at + 2 + len];
                if !is_braced_name(name) {
                    return err(at, ErrorKind::BadSubstitution);
                }
                w.push_var(name, quoted);
                self.i = at + 3 + len;
            }
            Some(b'(') => return err(at, ErrorKind::Unsupported(Unsupported::CommandSubstitution)),
            // Quoted, so that writing the word back cannot make it one.
            _ => {
                w.push_lit("$", true);
                self.i = at + 1;
            }
        }
        Ok(())
    }
}
