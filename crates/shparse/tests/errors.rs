//! Syntax errors: the kind and the exact byte offset for each bad line,
//! which ones are "incomplete", columns and messages.

use oxok_shparse::ErrorKind::{self, *};
use oxok_shparse::Operator::{self, *};
use oxok_shparse::{ParseError, Unsupported, parse};

/// (input, offset, kind).
const GOLDEN: &[(&str, usize, ErrorKind)] = &[
    // Quotes and escapes.
    ("echo 'abc", 5, UnterminatedSingleQuote),
    ("echo ok 'a\"b", 8, UnterminatedSingleQuote),
    ("'", 0, UnterminatedSingleQuote),
    ("echo \"abc", 5, UnterminatedDoubleQuote),
    ("echo \"a\\\"", 5, UnterminatedDoubleQuote),
    ("echo \"a'b", 5, UnterminatedDoubleQuote),
    ("\"", 0, UnterminatedDoubleQuote),
    ("echo abc\\", 8, TrailingBackslash),
    ("\\", 0, TrailingBackslash),
    // Parameters.
    ("echo ${HOME", 5, UnterminatedBrace),
    ("echo \"${HOME\"", 6, UnterminatedBrace),
    ("echo ${}", 5, BadSubstitution),
    ("echo ${A-b}", 5, BadSubstitution),
    ("echo ${A:-b}", 5, BadSubstitution),
    ("echo ${1a}", 5, BadSubstitution),
    ("echo ${??}", 5, BadSubstitution),
    ("echo ${ A}", 5, BadSubstitution),
    // Redirections.
    ("echo >", 5, MissingRedirectTarget),
    ("echo > ;", 5, MissingRedirectTarget),
    ("echo 2> | x", 5, MissingRedirectTarget),
    ("echo >>", 5, MissingRedirectTarget),
    ("echo <", 5, MissingRedirectTarget),
    ("echo >&", 5, MissingRedirectTarget),
    ("echo >f >", 8, MissingRedirectTarget),
    ("echo > > f", 5, MissingRedirectTarget),
    ("cmd >#f", 4, MissingRedirectTarget),
    ("echo >&x", 7, BadFd),
    ("echo >&-", 7, BadFd),
    ("echo >&'1'", 7, BadFd),
    ("echo >&$X", 7, BadFd),
    ("echo >&1x", 7, BadFd),
    ("echo >&99999999999", 7, BadFd),
    ("echo 99999999999>x", 5, BadFd),
    ("echo 4294967296>x", 5, BadFd),
    // Pipelines.
    ("a | | b", 4, EmptyPipelineStage),
    ("a | ; b", 4, EmptyPipelineStage),
    ("a | & b", 4, EmptyPipelineStage),
    ("a |\n&& b", 4, EmptyPipelineStage),
    ("a |", 2, TrailingOperator(Pipe)),
    ("a | \n", 2, TrailingOperator(Pipe)),
    ("a | # comment", 2, TrailingOperator(Pipe)),
    // And-or lists.
    ("a &&", 2, TrailingOperator(And)),
    ("a ||  # comment", 2, TrailingOperator(Or)),
    ("a && b ||\n\n", 7, TrailingOperator(Or)),
    ("a && ; b", 5, UnexpectedOperator(Semi)),
    ("a && && b", 5, UnexpectedOperator(And)),
    ("a || | b", 5, UnexpectedOperator(Pipe)),
    ("a &&\n& b", 5, UnexpectedOperator(Amp)),
    // Lists.
    ("| a", 0, UnexpectedOperator(Pipe)),
    ("; a", 0, UnexpectedOperator(Semi)),
    ("&", 0, UnexpectedOperator(Amp)),
    ("&& a", 0, UnexpectedOperator(And)),
    ("|| a", 0, UnexpectedOperator(Or)),
    ("a;;b", 2, UnexpectedOperator(Semi)),
    ("a ; ; b", 4, UnexpectedOperator(Semi)),
    ("a & & b", 4, UnexpectedOperator(Amp)),
    ("a &; b", 3, UnexpectedOperator(Semi)),
    ("a\n\n;b", 3, UnexpectedOperator(Semi)),
    ("  # c\n ; b", 7, UnexpectedOperator(Semi)),
    // Reserved syntax.
    ("(a)", 0, Unsupported(Unsupported::Subshell)),
    ("a )", 2, Unsupported(Unsupported::Subshell)),
    ("a(b", 1, Unsupported(Unsupported::Subshell)),
    ("echo `date`", 5, Unsupported(Unsupported::CommandSubstitution)),
    ("echo a`b", 6, Unsupported(Unsupported::CommandSubstitution)),
    ("echo $(date)", 5, Unsupported(Unsupported::CommandSubstitution)),
    ("echo \"$(date)\"", 6, Unsupported(Unsupported::CommandSubstitution)),
    ("echo \"`x`\"", 6, Unsupported(Unsupported::CommandSubstitution)),
    ("cat <<EOF", 4, Unsupported(Unsupported::HereDocument)),
    ("cat 0<<EOF", 5, Unsupported(Unsupported::HereDocument)),
    ("cat <> f", 4, Unsupported(Unsupported::ReadWrite)),
    ("echo >| f", 5, Unsupported(Unsupported::Clobber)),
    ("echo &> f", 5, Unsupported(Unsupported::AmpRedirect)),
    // NUL, even quoted or in a comment.
    ("echo a\0b", 6, NulByte),
    ("echo '\0'", 6, NulByte),
    ("# \0", 2, NulByte),
    // The first error wins.
    ("a | | 'b", 4, EmptyPipelineStage),
    ("a 'b | |", 2, UnterminatedSingleQuote),
    // Offsets count bytes.
    ("é | | x", 5, EmptyPipelineStage),
    ("echo 'é", 5, UnterminatedSingleQuote),
    ("日本 >", 7, MissingRedirectTarget),
];

#[test]
fn golden_errors() {
    let mut failures = Vec::new();
    for &(line, pos, kind) in GOLDEN {
        let want = ParseError { pos, kind };
        match parse(line) {
            Err(e) if e == want => {}
            other => failures.push(format!("{line:?}: got {other:?}, want {want:?}")),
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn offsets_are_in_range_and_on_char_boundaries() {
    for &(line, _, _) in GOLDEN {
        let e = parse(line).unwrap_err();
        assert!(e.pos <= line.len() && line.is_char_boundary(e.pos), "{line:?}: {e:?}");
    }
}

#[test]
fn incomplete_errors_are_exactly_the_continuable_ones() {
    for &(line, _, kind) in GOLDEN {
        let e = parse(line).unwrap_err();
        let expect =
            matches!(kind, UnterminatedSingleQuote | UnterminatedDoubleQuote | TrailingBackslash | TrailingOperator(_));
        assert_eq!(e.is_incomplete(), expect, "{line:?}");
    }
}

#[test]
fn columns_count_characters() {
    let line = "é | | x";
    let e = parse(line).unwrap_err();
    assert_eq!((e.pos, e.column(line)), (5, 4));
    assert_eq!(e.column(""), 0);
    let e = parse("ab |").unwrap_err();
    assert_eq!(e.column("ab |"), 3);
    // Clamped when given a shorter line.
    assert_eq!(e.column("ab"), 2);
}

#[test]
fn messages() {
    let msg = |line: &str| parse(line).unwrap_err().to_string();
    assert_eq!(msg("echo 'x"), "syntax error at byte 5: unterminated single quote");
    assert_eq!(msg("a | | b"), "syntax error at byte 4: empty pipeline stage");
    assert_eq!(msg("a &&"), "syntax error at byte 2: missing command after `&&`");
    assert_eq!(msg("a\n;"), "syntax error at byte 2: unexpected `;`");
    assert_eq!(msg("echo &> f"), "syntax error at byte 5: `&>` is not supported; use `>file 2>&1`");
    assert_eq!(msg("x >"), "syntax error at byte 2: missing redirection target");
    let ops = [(Pipe, "`|`"), (And, "`&&`"), (Or, "`||`"), (Semi, "`;`"), (Amp, "`&`"), (Operator::Newline, "newline")];
    for (op, text) in ops {
        assert_eq!(op.to_string(), text);
    }
    // Every kind has a non-empty message.
    for &(_, _, kind) in GOLDEN {
        assert!(!kind.to_string().is_empty());
    }
}
