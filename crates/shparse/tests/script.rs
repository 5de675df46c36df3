//! Scripts: compound commands (`if`, `while`, `until`, `for`), functions, keywords
//! only at command position, incomplete input, bounded nesting.

use oxok_shparse::{ErrorKind, MAX_DEPTH, Stmt, parse_script};

/// The statement kinds of a script, as a short text (`I` an item, `if(…)`).
fn shape(stmts: &[Stmt]) -> String {
    let parts: Vec<String> = stmts
        .iter()
        .map(|s| match s {
            Stmt::Item(i) => {
                if i.background {
                    "I&".into()
                } else {
                    "I".into()
                }
            }
            Stmt::If { branches, otherwise } => {
                let b: Vec<String> = branches.iter().map(|(c, b)| format!("{}?{}", shape(c), shape(b))).collect();
                format!("if({}:{})", b.join("|"), shape(otherwise))
            }
            Stmt::Loop { until, cond, body } => {
                format!("{}({}:{})", if *until { "until" } else { "while" }, shape(cond), shape(body))
            }
            Stmt::For { name, words, body } => format!("for {name}[{}]({})", words.len(), shape(body)),
            Stmt::Function { name, body } => format!("fn {name}({})", shape(body)),
        })
        .collect();
    parts.join(",")
}

fn ok(text: &str) -> String {
    shape(&parse_script(text).unwrap_or_else(|e| panic!("{text:?}: {e}")))
}

fn kind(text: &str) -> ErrorKind {
    parse_script(text).expect_err(text).kind
}

#[test]
fn compound_commands() {
    assert_eq!(ok("a; b &"), "I,I&");
    assert_eq!(ok("if a; then b; fi"), "if(I?I:)");
    assert_eq!(ok("if a; then b; elif c; then d; e; else f; fi; g"), "if(I?I|I?I,I:I),I");
    assert_eq!(ok("while a; do b; c; done"), "while(I:I,I)");
    assert_eq!(ok("until a\ndo\nb\ndone"), "until(I:I)");
    assert_eq!(ok("for x in 1 2 $Y; do echo $x; done"), "for x[3](I)");
    assert_eq!(ok("for x in; do a; done"), "for x[0](I)");
    assert_eq!(ok("for i in a b\ndo if x; then while y; do z; done; fi; done"), "for i[2](if(I?while(I:I):))");
    // Keywords are words elsewhere, or quoted.
    assert_eq!(ok("echo if then fi"), "I");
    assert_eq!(ok("'if' a"), "I");
}

#[test]
fn incomplete_and_wrong() {
    for text in ["if a; then b", "if a", "while a; do b", "for x in a b", "if a; then b; else c"] {
        let e = parse_script(text).expect_err(text);
        assert!(e.is_incomplete(), "{text:?} should be incomplete, got {e}");
        assert!(matches!(e.kind, ErrorKind::MissingKeyword(_)));
    }
    assert_eq!(kind("fi"), ErrorKind::UnexpectedKeyword("fi"));
    assert_eq!(kind("if a; fi"), ErrorKind::UnexpectedKeyword("fi"));
    assert_eq!(kind("while a; then b; done"), ErrorKind::UnexpectedKeyword("then"));
    assert_eq!(kind("for 1 in a; do b; done"), ErrorKind::UnexpectedKeyword("for"));
    assert_eq!(kind("for x; do b; done"), ErrorKind::MissingKeyword("in"));
    assert!(matches!(kind("if a; then b; fi & c"), ErrorKind::UnexpectedOperator(_)));
    assert_eq!(parse_script("if a; then b; fi").unwrap().len(), 1);
}

#[test]
fn nesting_is_bounded() {
    let deep = |n: usize| format!("{}x{}", "if a; then ".repeat(n), "; fi".repeat(n));
    assert!(parse_script(&deep(MAX_DEPTH)).is_ok());
    assert_eq!(kind(&deep(MAX_DEPTH + 1)), ErrorKind::TooDeep);
    // Far deeper input is refused the same way, without exhausting the stack.
    assert_eq!(kind(&deep(10_000)), ErrorKind::TooDeep);
}

#[test]
fn functions() {
    assert_eq!(ok("greet() { echo hi $1; }"), "fn greet(I)");
    assert_eq!(ok("f()\n{\n a\n b\n}\nf x"), "fn f(I,I),I");
    assert_eq!(ok("f() { if a; then return 1; fi; b; }; f"), "fn f(if(I?I:),I),I");
    assert_eq!(ok("f() { g() { a; }; }"), "fn f(fn g(I))");
    // Braces are keywords only where a command starts.
    assert_eq!(ok("echo { }"), "I");
    // Incomplete: the shell reads more lines.
    for text in ["f() {", "f() { a;", "f()"] {
        assert!(parse_script(text).expect_err(text).is_incomplete(), "{text:?}");
    }
    assert_eq!(kind("echo f()"), ErrorKind::MisplacedFunction);
    assert_eq!(kind("f() echo"), ErrorKind::MisplacedFunction);
    assert_eq!(kind("if() { a; }"), ErrorKind::MisplacedFunction);
    assert_eq!(kind("}"), ErrorKind::UnexpectedKeyword("}"));
    assert_eq!(kind("{ a; }"), ErrorKind::UnexpectedKeyword("{"));
    assert!(matches!(kind("echo (x)"), ErrorKind::Unsupported(_)));
}

#[test]
fn functions_nest_boundedly() {
    let deep = "f() { ".repeat(MAX_DEPTH + 1) + &"}; ".repeat(MAX_DEPTH + 1);
    assert_eq!(kind(&deep), ErrorKind::TooDeep);
}
