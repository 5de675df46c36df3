//! Scripts: the command language with compound commands, over the same
//! tokens as [`parse`](crate::parse):
//!
//! ```text
//! script   := sep* (stmt (sep+ stmt)*)? sep*               sep := ';' | '&' | newline
//! stmt     := and_or | if | loop | for | function                     ('&' only after an and_or)
//! if       := 'if' script 'then' script ('elif' script 'then' script)* ('else' script)? 'fi'
//! loop     := ('while' | 'until') script 'do' script 'done'
//! for      := 'for' NAME ('in' word*)? sep* 'do' script 'done'
//! function := NAME '()' newline* '{' script '}'
//! ```
//!
//! Keywords count only where a command starts and unquoted (`echo if` and
//! `'if'` are words). `for NAME` without `in` is refused (there are no
//! positional parameters). Nesting is bounded by [`MAX_DEPTH`], so no input
//! can exhaust the stack. An unclosed compound command is an incomplete
//! input ([`ErrorKind::MissingKeyword`]): an interactive shell reads more.

use alloc::string::String;
use alloc::vec::Vec;

use crate::ast::{Item, Word};
use crate::error::{ErrorKind, Operator, ParseError};
use crate::lexer::{Tok, Token, is_name};
use crate::parser::Parser;

/// How deep compound commands may nest.
pub const MAX_DEPTH: usize = 16;

/// One statement of a script.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Stmt {
    /// An and-or list, possibly in the background (as in a [`List`](crate::List)).
    Item(Item<Word>),
    /// `if c; then a; elif d; then b; else e; fi`: the `(condition, body)`
    /// branches in order, and the `else` part (empty without one).
    If {
        /// Conditions and bodies.
        branches: Vec<(Vec<Stmt>, Vec<Stmt>)>,
        /// The `else` part.
        otherwise: Vec<Stmt>,
    },
    /// `while c; do b; done` (or `until`: runs while `c` fails).
    Loop {
        /// `until` rather than `while`.
        until: bool,
        /// The condition.
        cond: Vec<Stmt>,
        /// The body.
        body: Vec<Stmt>,
    },
    /// `NAME() { body; }`: defines (or replaces) a function.
    Function {
        /// Its name.
        name: String,
        /// Its body, run with the call's arguments as `$1`, `$2`, ….
        body: Vec<Stmt>,
    },
    /// `for NAME in words; do b; done`.
    For {
        /// The variable.
        name: String,
        /// The words, expanded when the loop starts.
        words: Vec<Word>,
        /// The body.
        body: Vec<Stmt>,
    },
}

/// Parses a script (one line or several joined by newlines).
pub fn parse_script(text: &str) -> Result<Vec<Stmt>, ParseError> {
    let mut p = Parser::new(text)?;
    let (stmts, end) = block(&mut p, &[], 0)?;
    match end {
        None => Ok(stmts),
        Some((kw, pos)) => Err(ParseError { pos, kind: ErrorKind::UnexpectedKeyword(kw) }),
    }
}

/// Every keyword; those that close a block end it.
const KEYWORDS: &[&str] = &["if", "then", "elif", "else", "fi", "while", "until", "do", "done", "for", "in", "{", "}"];

/// The keyword the next token is, if it is one (unquoted, alone).
fn keyword(p: &mut Parser<'_>) -> Result<Found, ParseError> {
    Ok(match p.peek()? {
        Some(Token { tok: Tok::Word(w), pos }) => {
            w.as_plain().and_then(|t| KEYWORDS.iter().find(|k| **k == t)).map(|k| (*k, *pos))
        }
        _ => None,
    })
}

/// A keyword and where it is.
type Found = Option<(&'static str, usize)>;

/// Statements until one of `ends` (returned, not consumed) or the end of
/// the input (then `None`; an error if `ends` is not empty).
fn block(p: &mut Parser<'_>, ends: &[&'static str], depth: usize) -> Result<(Vec<Stmt>, Found), ParseError> {
    let mut stmts = Vec::new();
    loop {
        p.skip_newlines()?;
        let at = p.line.len();
        match p.peek()? {
            None => {
                return match ends.first() {
                    Some(kw) => Err(ParseError { pos: at, kind: ErrorKind::MissingKeyword(kw) }),
                    None => Ok((stmts, None)),
                };
            }
            Some(Token { tok: Tok::Op(op), pos }) => {
                return Err(ParseError { pos: *pos, kind: ErrorKind::UnexpectedOperator(*op) });
            }
            Some(_) => {}
        }
        let stmt = match (function_start(p)?, keyword(p)?) {
            (Some(pos), _) => {
                if depth >= MAX_DEPTH {
                    return Err(ParseError { pos, kind: ErrorKind::TooDeep });
                }
                parse_function(p, depth + 1)?
            }
            (None, Some((kw, pos))) if ends.contains(&kw) => return Ok((stmts, Some((kw, pos)))),
            (None, Some((kw @ ("if" | "while" | "until" | "for"), pos))) => {
                if depth >= MAX_DEPTH {
                    return Err(ParseError { pos, kind: ErrorKind::TooDeep });
                }
                p.bump();
                match kw {
                    "if" => parse_if(p, depth + 1)?,
                    "for" => parse_for(p, pos, depth + 1)?,
                    _ => parse_loop(p, kw == "until", depth + 1)?,
                }
            }
            (None, Some((kw, pos))) => return Err(ParseError { pos, kind: ErrorKind::UnexpectedKeyword(kw) }),
            (None, None) => {
                let and_or = p.and_or()?;
                let background = p.peek_op()? == Some(Operator::Amp);
                if matches!(p.peek_op()?, Some(Operator::Amp | Operator::Semi | Operator::Newline)) {
                    p.bump();
                }
                stmts.push(Stmt::Item(Item { and_or, background }));
                continue;
            }
        };
        stmts.push(stmt);
        // After a compound command: a separator, the end, or a closing keyword.
        match p.peek_op()? {
            Some(Operator::Semi | Operator::Newline) => {
                p.bump();
            }
            Some(op) => {
                let pos = p.peek()?.map_or(0, |t| t.pos);
                return Err(ParseError { pos, kind: ErrorKind::UnexpectedOperator(op) });
            }
            None => {}
        }
    }
}

/// Consumes the keyword `kw` that [`block`] stopped at.
fn expect(p: &mut Parser<'_>, found: Found, kw: &'static str) -> Result<(), ParseError> {
    match found {
        Some((k, _)) if k == kw => {
            p.bump();
            Ok(())
        }
        Some((k, pos)) => Err(ParseError { pos, kind: ErrorKind::UnexpectedKeyword(k) }),
        None => Err(ParseError { pos: p.line.len(), kind: ErrorKind::MissingKeyword(kw) }),
    }
}

fn parse_if(p: &mut Parser<'_>, depth: usize) -> Result<Stmt, ParseError> {
    let mut branches = Vec::new();
    loop {
        let (cond, end) = block(p, &["then"], depth)?;
        expect(p, end, "then")?;
        let (body, end) = block(p, &["fi", "elif", "else"], depth)?;
        branches.push((cond, body));
        match end {
            Some(("elif", _)) => {
                p.bump();
            }
            Some(("else", _)) => {
                p.bump();
                let (otherwise, end) = block(p, &["fi"], depth)?;
                expect(p, end, "fi")?;
                return Ok(Stmt::If { branches, otherwise });
            }
            end => {
                expect(p, end, "fi")?;
                return Ok(Stmt::If { branches, otherwise: Vec::new() });
            }
        }
    }
}

fn parse_loop(p: &mut Parser<'_>, until: bool, depth: usize) -> Result<Stmt, ParseError> {
    let (cond, end) = block(p, &["do"], depth)?;
    expect(p, end, "do")?;
    let (body, end) = block(p, &["done"], depth)?;
    expect(p, end, "done")?;
    Ok(Stmt::Loop { until, cond, body })
}

fn parse_for(p: &mut Parser<'_>, at: usize, depth: usize) -> Result<Stmt, ParseError> {
    p.peek()?;
    let name = match p.bump() {
        Some(Token { tok: Tok::Word(w), pos }) => match w.as_plain() {
            Some(n) if is_name(n) && !KEYWORDS.contains(&n) => String::from(n),
            _ => return Err(ParseError { pos, kind: ErrorKind::UnexpectedKeyword("for") }),
        },
        _ => return Err(ParseError { pos: at, kind: ErrorKind::MissingKeyword("in") }),
    };
    match keyword(p)? {
        Some(("in", _)) => {
            p.bump();
        }
        _ => return Err(ParseError { pos: at, kind: ErrorKind::MissingKeyword("in") }),
    }
    let mut words = Vec::new();
    while let Some(Token { tok: Tok::Word(_), .. }) = p.peek()? {
        if let Some(Token { tok: Tok::Word(w), .. }) = p.bump() {
            words.push(w);
        }
    }
    if matches!(p.peek_op()?, Some(Operator::Semi)) {
        p.bump();
    }
    p.skip_newlines()?;
    match keyword(p)? {
        Some(("do", _)) => {
            p.bump();
        }
        Some((k, pos)) => return Err(ParseError { pos, kind: ErrorKind::UnexpectedKeyword(k) }),
        None if p.peek()?.is_none() => {
            return Err(ParseError { pos: p.line.len(), kind: ErrorKind::MissingKeyword("do") });
        }
        None => {
            let pos = p.peek()?.map_or(0, |t| t.pos);
            return Err(ParseError { pos, kind: ErrorKind::MissingKeyword("do") });
        }
    }
    let (body, end) = block(p, &["done"], depth)?;
    expect(p, end, "done")?;
    Ok(Stmt::For { name, words, body })
}

/// Where a function definition starts, if the next tokens are a plain,
/// non-keyword name and `()`.
fn function_start(p: &mut Parser<'_>) -> Result<Option<usize>, ParseError> {
    Ok(match p.peek2()? {
        (Some(Token { tok: Tok::Word(w), pos }), Some(Token { tok: Tok::Parens, .. })) => {
            w.as_plain().filter(|n| is_name(n) && !KEYWORDS.contains(n)).map(|_| *pos)
        }
        _ => None,
    })
}

/// `NAME() { body }`, at `NAME` ([`function_start`] said so).
fn parse_function(p: &mut Parser<'_>, depth: usize) -> Result<Stmt, ParseError> {
    let name = match p.bump() {
        Some(Token { tok: Tok::Word(w), .. }) => String::from(w.as_plain().unwrap_or_default()),
        _ => String::new(),
    };
    p.bump(); // `()`
    p.skip_newlines()?;
    match keyword(p)? {
        Some(("{", _)) => {
            p.bump();
        }
        Some((k, pos)) => return Err(ParseError { pos, kind: ErrorKind::UnexpectedKeyword(k) }),
        None => {
            let end = p.line.len();
            return Err(match p.peek()? {
                None => ParseError { pos: end, kind: ErrorKind::MissingKeyword("{") },
                Some(t) => ParseError { pos: t.pos, kind: ErrorKind::MisplacedFunction },
            });
        }
    }
    let (body, end) = block(p, &["}"], depth)?;
    expect(p, end, "}")?;
    Ok(Stmt::Function { name, body })
}
