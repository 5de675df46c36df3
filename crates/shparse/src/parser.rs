//! The grammar, over the lexer's tokens:
//!
//! ```text
//! line     := sep* (and_or (sep+ and_or)*)? sep*      sep := ';' | '&' | newline
//! and_or   := pipeline (('&&' | '||') newline* pipeline)*
//! pipeline := simple ('|' newline* simple)*
//! simple   := (assignment | redirect)* (word (word | redirect)*)?   -- not empty
//! redirect := [fd] ('<' | '>' | '>>') word | [fd] ('<&' | '>&') digits
//! ```
//!
//! `;` and `&` must follow a command (`; a` and `a;;` are errors); a
//! newline may also stand alone, so blank lines are fine. `&` marks the
//! item before it as background. An assignment is a word whose unquoted
//! start is `NAME=`, before the command name.
//!
//! The parser is a loop, not a recursion: the tree has fixed depth, so no
//! input can exhaust the stack.

use alloc::string::String;
use alloc::vec::Vec;

use crate::ast::{AndOr, Command, Connector, Item, List, Part, Pipeline, Redirect, Simple, Span, Target, Word};
use crate::error::{ErrorKind, Operator, ParseError};
use crate::lexer::{Lexer, RedirOp, Tok, Token, is_name, is_name_start, lexer};

/// Parses one line (or several joined by newlines) into a [`Command`].
///
/// Nothing is expanded: `$X` stays a [`Part::Var`] so that the shell can
/// expand each pipeline just before running it (then `false; echo $?`
/// prints 1). See [`expand`](crate::expand).
pub fn parse(line: &str) -> Result<Command, ParseError> {
    Parser { line, lexer: lexer(line)?, next: None, after: None }.line()
}

pub(crate) struct Parser<'a> {
    pub(crate) line: &'a str,
    lexer: Lexer<'a>,
    /// The lookahead token, once read.
    next: Option<Token>,
    /// The token after it, once [`Parser::peek2`] has read it.
    after: Option<Token>,
}

impl<'a> Parser<'a> {
    /// A parser at the start of `line`.
    pub(crate) fn new(line: &'a str) -> Result<Parser<'a>, ParseError> {
        Ok(Parser { line, lexer: lexer(line)?, next: None, after: None })
    }
}

fn err<T>(pos: usize, kind: ErrorKind) -> Result<T, ParseError> {
    Err(ParseError { pos, kind })
}

impl Parser<'_> {
    /// The next token without consuming it; `None` at the end.
    pub(crate) fn peek(&mut self) -> Result<Option<&Token>, ParseError> {
        if self.next.is_none() {
            self.next = self.lexer.next_token()?;
        }
        Ok(self.next.as_ref())
    }

    /// The next token if it is a control operator.
    pub(crate) fn peek_op(&mut self) -> Result<Option<Operator>, ParseError> {
        Ok(match self.peek()? {
            Some(Token { tok: Tok::Op(op), .. }) => Some(*op),
            _ => None,
        })
    }

    /// The two next tokens without consuming them.
    pub(crate) fn peek2(&mut self) -> Result<(Option<&Token>, Option<&Token>), ParseError> {
        self.peek()?;
        if self.next.is_some() && self.after.is_none() {
            self.after = self.lexer.next_token()?;
        }
        Ok((self.next.as_ref(), self.after.as_ref()))
    }

    /// Consumes the token [`Parser::peek`] returned.
    pub(crate) fn bump(&mut self) -> Option<Token> {
        let token = self.next.take();
        self.next = self.after.take();
        token
    }

    pub(crate) fn skip_newlines(&mut self) -> Result<(), ParseError> {
        while self.peek_op()? == Some(Operator::Newline) {
            self.bump();
        }
        Ok(())
    }

    /// After an operator at `op`, which must be followed by a command:
    /// fails at the end with [`ErrorKind::TrailingOperator`] and at another
    /// operator with `then`.
    fn need_command(&mut self, which: Operator, op: usize, then: fn(Operator) -> ErrorKind) -> Result<(), ParseError> {
        self.skip_newlines()?;
        match self.peek()? {
            None => err(op, ErrorKind::TrailingOperator(which)),
            Some(Token { tok: Tok::Op(next), pos }) => err(*pos, then(*next)),
            Some(_) => Ok(()),
        }
    }

    fn line(&mut self) -> Result<Command, ParseError> {
        let mut list = List { items: Vec::new() };
        loop {
            self.skip_newlines()?;
            match self.peek()? {
                None => return Ok(list),
                Some(Token { tok: Tok::Op(op), pos }) => return err(*pos, ErrorKind::UnexpectedOperator(*op)),
                Some(_) => {}
            }
            let and_or = self.and_or()?;
            // and_or stops only at the end or at a separator.
            let background = self.peek_op()? == Some(Operator::Amp);
            self.bump();
            list.items.push(Item { and_or, background });
        }
    }

    pub(crate) fn and_or(&mut self) -> Result<AndOr<Word>, ParseError> {
        let first = self.pipeline()?;
        let mut rest = Vec::new();
        loop {
            let (connector, which) = match self.peek_op()? {
                Some(Operator::And) => (Connector::And, Operator::And),
                Some(Operator::Or) => (Connector::Or, Operator::Or),
                _ => return Ok(AndOr { first, rest }),
            };
            let op = self.bump().map_or(0, |t| t.pos);
            self.need_command(which, op, ErrorKind::UnexpectedOperator)?;
            rest.push((connector, self.pipeline()?));
        }
    }

    fn pipeline(&mut self) -> Result<Pipeline<Word>, ParseError> {
        let mut commands = Vec::new();
        loop {
            commands.push(self.simple()?);
            if self.peek_op()? != Some(Operator::Pipe) {
                return Ok(Pipeline { commands });
            }
            let op = self.bump().map_or(0, |t| t.pos);
            self.need_command(Operator::Pipe, op, |_| ErrorKind::EmptyPipelineStage)?;
        }
    }

    /// Called only at a word or a redirection.
    fn simple(&mut self) -> Result<Simple<Word>, ParseError> {
        let mut cmd = Simple { assignments: Vec::new(), argv: Vec::new(), redirects: Vec::new() };
        loop {
            match self.peek()? {
                None | Some(Token { tok: Tok::Op(_), .. }) => break,
                Some(_) => {}
            }
            match self.bump() {
                Some(Token { tok: Tok::Word(w), .. }) => match split_assignment(self.line, &w) {
                    Some(pair) if cmd.argv.is_empty() => cmd.assignments.push(pair),
                    _ => cmd.argv.push(w),
                },
                Some(Token { tok: Tok::Redir { fd, op }, pos }) => cmd.redirects.push(self.redirect(fd, op, pos)?),
                Some(Token { tok: Tok::Parens, pos }) => return err(pos, ErrorKind::MisplacedFunction),
                _ => break,
            }
        }
        Ok(cmd)
    }

    /// After the operator of a redirection at `pos`.
    fn redirect(&mut self, fd: Option<u32>, op: RedirOp, pos: usize) -> Result<Redirect<Word>, ParseError> {
        let Some(Token { tok: Tok::Word(_), .. }) = self.peek()? else {
            return err(pos, ErrorKind::MissingRedirectTarget);
        };
        let Some(Token { tok: Tok::Word(w), pos: wpos }) = self.bump() else {
            return err(pos, ErrorKind::MissingRedirectTarget);
        };
        let (default_fd, target) = match op {
            RedirOp::Read => (0, Target::Read(w)),
            RedirOp::Write => (1, Target::Write(w)),
            RedirOp::Append => (1, Target::Append(w)),
            RedirOp::Dup { out } => {
                let n = w.as_plain().filter(|t| t.bytes().all(|b| b.is_ascii_digit())).and_then(|t| t.parse().ok());
                let Some(n) = n else { return err(wpos, ErrorKind::BadFd) };
                (u32::from(out), Target::Dup(n))
            }
        };
        Ok(Redirect { fd: fd.unwrap_or(default_fd), target })
    }
}

/// `NAME=value` → `(NAME, value)` when the word starts with `NAME=`
/// unquoted (so not `''X=1`, `"X"=1` or `X\=1`).
fn split_assignment(line: &str, w: &Word) -> Option<(String, Word)> {
    if !line.as_bytes().get(w.span.start).is_some_and(|&b| is_name_start(b)) {
        return None;
    }
    let Some(Part::Lit { text, quoted: false }) = w.parts.first() else { return None };
    let eq = text.find('=')?;
    let name = &text[..eq];
    if !is_name(name) {
        return None;
    }
    let mut value = Word::new(Span { start: w.span.start + eq + 1, end: w.span.end });
    value.push_lit(&text[eq + 1..], false);
    value.parts.extend(w.parts[1..].iter().cloned());
    value.quoted = w.quoted;
    Some((String::from(name), value))
}
