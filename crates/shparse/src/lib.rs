//! The front end of the Oxok shell: a line editor core, the command
//! language's parser, and parameter expansion. Pure logic, `no_std` with
//! `alloc`, no `unsafe`, no I/O; every function accepts any input without
//! panicking.
//!
//! # Pipeline of a command line
//!
//! 1. [`LineEditor::feed`] turns terminal bytes into echo and, at Enter, an
//!    [`Event::Line`].
//! 2. [`parse`] turns the line into a [`Command`]: a [`List`] of [`AndOr`]s
//!    of [`Pipeline`]s of [`Simple`] commands whose words are unexpanded
//!    [`Word`]s. Errors carry a byte offset ([`ParseError::pos`]).
//! 3. Just before running each pipeline, [`Pipeline::expand`] replaces
//!    `$NAME`, `${NAME}` and `$?` using the shell's lookup and yields
//!    `Simple { assignments: Vec<(String, String)>, argv: Vec<String>,
//!    redirects: Vec<Redirect> }`. Expanding late is why expansion is a
//!    separate step: `false; echo $?` must print 1.
//!
//! # The language
//!
//! ```text
//! X=1 prog 'single $quoted' "double $X \" \\ \$" back\ slash # comment
//! a | b | c          pipelines
//! a && b || c        and-or lists, left-associative, equal precedence
//! a; b & c           sequences; & runs in the background (the shell may refuse)
//! < in  > out  >> log  2> err  2>&1  0<&3      redirections, applied in order
//! ```
//!
//! Newlines separate commands like `;`, and may follow `|`, `&&`, `||`.
//! Not supported (rejected with [`ErrorKind::Unsupported`], so they can be
//! added later without changing accepted lines): `( )`, `` `..` ``, `$(..)`,
//! `<<`, `<>`, `>|`, `&>`. Parsing is iterative, so long lines or
//! thousands of operators cannot overflow the stack.
//!
//! # Expansion
//!
//! The lookup is any `FnMut(&str) -> Option<S>` with `S: AsRef<str>`; it
//! gets the name without `$` (`"HOME"`, `"?"` for `$?`; also `$$ $# $! $* $@
//! $0`..`$9`, `${10}`) and returns `None` for an unset parameter, which
//! expands to nothing. Deliberately simpler than POSIX:
//!
//! * **No field splitting, no globbing, no `~`**: a word is at most one
//!   argument whatever its variables contain (`X='a b'; cmd $X` passes one
//!   argument `a b`), and `*` is an ordinary character.
//! * A word with no quoting at all that expands to the empty string is
//!   dropped from argv (`cmd $UNSET x` gets one argument); a quoted one
//!   stays as an empty argument (`cmd "$UNSET" x` gets two).
//! * An unquoted redirection target that expands to nothing is an error
//!   ([`ExpandError::AmbiguousRedirect`]); assignment values are never
//!   dropped (`X=$UNSET` sets `X` to the empty string).
//! * Values are inserted verbatim and never parsed again.
//!
//! # Writing back
//!
//! Every tree, expanded or not, implements `Display` as canonical shell
//! text (`a | b >f 2>&1; c &`, parameters as `${NAME}`, quoting where
//! needed; see [`ShellText`]), for `jobs`, traces and messages. Parsing
//! the text of a parsed tree gives the same tree; parsing the text of an
//! expanded tree gives one that expands to it (except that a command that
//! expanded to nothing at all prints as nothing).
//!
//! ```
//! use oxok_shparse::{Target, parse};
//!
//! let cmd = parse("ls -l $DIR | wc > out.txt 2>&1; echo $?").unwrap();
//! let first = &cmd.items[0].and_or.first;
//! let lookup = |name: &str| match name {
//!     "DIR" => Some("/bin"),
//!     "?" => Some("0"),
//!     _ => None,
//! };
//! let p = first.expand(lookup).unwrap();
//! assert_eq!(p.commands[0].argv, ["ls", "-l", "/bin"]);
//! assert_eq!(p.commands[1].argv, ["wc"]);
//! assert_eq!(p.commands[1].redirects[0].target, Target::Write("out.txt".into()));
//! assert_eq!(p.commands[1].redirects[1].target, Target::Dup(1));
//! assert_eq!(cmd.to_string(), "ls -l ${DIR} | wc >out.txt 2>&1; echo ${?}");
//! ```

#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

mod ast;
mod display;
mod editor;
mod error;
mod expand;
mod history;
mod lexer;
mod parser;
mod script;

pub use ast::{AndOr, Command, Connector, Item, List, Part, Pipeline, Redirect, Simple, Span, Target, Word};
pub use display::{Place, ShellText};
pub use editor::{Event, LineEditor};
pub use error::{ErrorKind, ExpandError, Operator, ParseError, Unsupported};
pub use expand::expand;
pub use history::History;
pub use parser::parse;
pub use script::{MAX_DEPTH, Stmt, parse_script};
