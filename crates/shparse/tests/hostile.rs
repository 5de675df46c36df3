//! Hostile and random input: huge lines, thousands of operators, random
//! bytes through the editor and the parser (no panics, invariants hold),
//! and random trees written out and parsed back.

mod common;
use common::{Rng, dump, env, feed_all};
use oxok_shparse::{
    AndOr, Command, Connector, ErrorKind, Event, ExpandError, Item, LineEditor, List, Operator, Pipeline, Redirect,
    Simple, Target, Unsupported, Word, expand, parse,
};

#[test]
fn very_long_lines() {
    let big = "a".repeat(1 << 20);
    let cmd = parse(&format!("echo {big} '{big}' \"{big}$X\"")).unwrap();
    let argv = &cmd.items[0].and_or.first.commands[0].argv;
    assert_eq!(argv.len(), 4);
    assert_eq!(argv[1].as_plain().map(str::len), Some(1 << 20));
    let many = "w ".repeat(200_000);
    let cmd = parse(&many).unwrap();
    assert_eq!(cmd.items[0].and_or.first.commands[0].argv.len(), 200_000);
    let err = parse(&format!("{many}'")).unwrap_err();
    assert_eq!(err, oxok_shparse::ParseError { pos: 400_000, kind: ErrorKind::UnterminatedSingleQuote });
}

#[test]
fn thousands_of_operators() {
    const N: usize = 50_000;
    let cmd = parse(&format!("{}a", "a && ".repeat(N))).unwrap();
    assert_eq!(cmd.items[0].and_or.rest.len(), N);
    let cmd = parse(&format!("{}a", "a || ".repeat(N))).unwrap();
    assert!(cmd.items[0].and_or.rest.iter().all(|(c, _)| *c == Connector::Or));
    let cmd = parse(&format!("{}a", "a | ".repeat(N))).unwrap();
    assert_eq!(cmd.items[0].and_or.first.commands.len(), N + 1);
    let cmd = parse(&"a;".repeat(N)).unwrap();
    assert_eq!(cmd.items.len(), N);
    let cmd = parse(&"a&".repeat(N)).unwrap();
    assert!(cmd.items.iter().all(|i| i.background));
    let cmd = parse(&"\n".repeat(N)).unwrap();
    assert!(cmd.is_empty());
    let cmd = parse(&"x >f ".repeat(N)).unwrap();
    assert_eq!(cmd.items[0].and_or.first.commands[0].redirects.len(), N);
    let cmd = parse(&"X=1 ".repeat(N)).unwrap();
    assert_eq!(cmd.items[0].and_or.first.commands[0].assignments.len(), N);
    // Display and expansion of huge trees do not recurse either.
    let cmd = parse(&format!("{}a", "a $X | ".repeat(N))).unwrap();
    assert!(cmd.to_string().len() > 7 * N);
    assert!(expand(&cmd, env).is_ok());
}

#[test]
fn thousands_of_openers() {
    const N: usize = 100_000;
    let sub = ErrorKind::Unsupported(Unsupported::Subshell);
    assert_eq!(parse(&"(".repeat(N)).unwrap_err().kind, sub);
    assert_eq!(parse(&")".repeat(N)).unwrap_err().kind, sub);
    assert_eq!(parse(&"|".repeat(N)).unwrap_err().kind, ErrorKind::UnexpectedOperator(Operator::Or));
    assert_eq!(parse(&"&".repeat(N)).unwrap_err().kind, ErrorKind::UnexpectedOperator(Operator::And));
    assert_eq!(parse(&";".repeat(N)).unwrap_err().kind, ErrorKind::UnexpectedOperator(Operator::Semi));
    assert_eq!(parse(&">".repeat(N)).unwrap_err().kind, ErrorKind::MissingRedirectTarget);
    assert_eq!(parse(&"${".repeat(N)).unwrap_err().kind, ErrorKind::UnterminatedBrace);
    assert_eq!(parse(&format!("{}}}", "${".repeat(N))).unwrap_err().kind, ErrorKind::BadSubstitution);
    assert_eq!(parse(&"$(".repeat(N)).unwrap_err().kind, ErrorKind::Unsupported(Unsupported::CommandSubstitution));
    assert_eq!(parse(&"\"".repeat(N + 1)).unwrap_err().kind, ErrorKind::UnterminatedDoubleQuote);
    assert!(parse(&"\"".repeat(N)).is_ok());
    assert!(parse(&"'".repeat(N)).is_ok());
    assert_eq!(parse(&"\\".repeat(N + 1)).unwrap_err().kind, ErrorKind::TrailingBackslash);
    let cmd = parse(&"\\".repeat(N)).unwrap();
    assert_eq!(expand(&cmd, env).unwrap().items[0].and_or.first.commands[0].argv[0].len(), N / 2);
    assert_eq!(parse(&"$".repeat(N)).unwrap().items[0].and_or.first.commands[0].argv[0].parts.len(), N / 2);
    assert_eq!(parse(&"9".repeat(N)).unwrap().items.len(), 1);
    assert_eq!(parse(&format!("{}>x", "9".repeat(N))).unwrap_err().kind, ErrorKind::BadFd);
    assert_eq!(parse(&format!("a >&{}", "9".repeat(N))).unwrap_err().kind, ErrorKind::BadFd);
}

fn is_empty(c: &Simple) -> bool {
    c.argv.is_empty() && c.assignments.is_empty() && c.redirects.is_empty()
}

/// Checks what must hold for any parse result.
fn check(line: &str) {
    match parse(line) {
        Err(e) => {
            assert!(e.pos <= line.len() && line.is_char_boundary(e.pos), "{line:?}: {e:?}");
            let _ = (e.to_string(), e.column(line), e.is_incomplete());
        }
        Ok(cmd) => {
            // Every node is non-empty.
            for item in &cmd.items {
                for (_, p) in item.and_or.pipelines() {
                    assert!(!p.commands.is_empty());
                    for c in &p.commands {
                        assert!(!(c.argv.is_empty() && c.assignments.is_empty() && c.redirects.is_empty()), "{line:?}");
                        for w in &c.argv {
                            assert!(w.span.start <= w.span.end && w.span.end <= line.len());
                            assert!(!w.parts.is_empty() || w.quoted, "{line:?}");
                        }
                    }
                }
            }
            // Written back, it reads back the same.
            let text = cmd.to_string();
            let again = parse(&text).unwrap_or_else(|e| panic!("{line:?} → {text:?}: {e:?}"));
            assert_eq!(dump(&again), dump(&cmd), "{line:?} → {text:?}");
            // Expansion never panics; its result also reads back (unless a
            // command expanded to nothing at all, which prints as nothing).
            if let Ok(list) = expand(&cmd, env)
                && !list.items.iter().any(|i| i.and_or.pipelines().any(|(_, p)| p.commands.iter().any(is_empty)))
            {
                let text = list.to_string();
                let again = expand(&parse(&text).unwrap(), |_: &str| None::<&str>).unwrap();
                assert_eq!(again, list, "{line:?} → {text:?}");
            }
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng::new(0x5eed);
    for _ in 0..20_000 {
        let len = rng.index(64);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        check(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn random_shell_soup_never_panics() {
    const ATOMS: &[&str] = &[
        " ", " ", "\t", "\n", "a", "bc", "X", "=", "'", "\"", "\\", "$", "{", "}", "?", "#", "|", "||", "&", "&&", ";",
        "<", ">", ">>", "2", "1", ">&", "<&", "X=", "=#", "-", "é", "日", "*", "$X", "${Y}", "$?", "(", "`", "\0",
        "\\\n", "''", "\"\"",
    ];
    let mut rng = Rng::new(42);
    let mut ok = 0;
    for _ in 0..50_000 {
        let n = rng.index(24);
        let line: String = (0..n).map(|_| *rng.pick(ATOMS)).collect();
        if parse(&line).is_ok() {
            ok += 1;
        }
        check(&line);
    }
    assert!(ok > 5_000, "the soup should often be valid ({ok})");
}

/// A random word with literal and parameter parts.
fn gen_word(rng: &mut Rng) -> Word {
    const TEXT: &[&str] = &[
        "a", "b1", "-", "/", ".", "=", "X=", "'", "\"", "\\", "$", "${", "}", "#", " ", "\n", "|", "&", ";", "<", ">",
        "(", ")", "`", "*", "~", "é", "2", "\t",
    ];
    const NAMES: &[&str] = &["A", "_b", "HOME", "?", "$", "1", "10", "EMPTY", "SP"];
    let mut w = Word::default();
    for _ in 0..rng.index(4) + 1 {
        if rng.chance(4) {
            w.push_var(rng.pick::<&str>(NAMES), rng.chance(2));
        } else {
            let text: String = (0..rng.index(4) + 1).map(|_| *rng.pick(TEXT)).collect();
            w.push_lit(&text, rng.chance(2));
        }
    }
    if rng.chance(8) {
        w.push_lit("", true);
    }
    w
}

fn gen_simple(rng: &mut Rng) -> Simple<Word> {
    let mut s = Simple::default();
    for _ in 0..rng.index(3) {
        s.assignments.push((rng.pick(&["X", "y_1", "_"]).to_string(), gen_word(rng)));
    }
    for _ in 0..rng.index(4) {
        s.argv.push(gen_word(rng));
    }
    for _ in 0..rng.index(3) {
        let fd = *rng.pick(&[0, 1, 2, 9, 10]);
        let target = match rng.index(4) {
            0 => Target::Read(gen_word(rng)),
            1 => Target::Write(gen_word(rng)),
            2 => Target::Append(gen_word(rng)),
            _ => Target::Dup(*rng.pick(&[0, 1, 2, 77])),
        };
        s.redirects.push(Redirect { fd, target });
    }
    if s.argv.is_empty() && s.assignments.is_empty() && s.redirects.is_empty() {
        s.argv.push(Word::literal("cmd"));
    }
    s
}

fn gen_list(rng: &mut Rng) -> Command {
    let pipeline = |rng: &mut Rng| Pipeline { commands: (0..rng.index(3) + 1).map(|_| gen_simple(rng)).collect() };
    let items = (0..rng.index(4))
        .map(|_| {
            let first = pipeline(rng);
            let rest = (0..rng.index(3))
                .map(|_| (if rng.chance(2) { Connector::And } else { Connector::Or }, pipeline(rng)))
                .collect();
            Item { and_or: AndOr { first, rest }, background: rng.chance(3) }
        })
        .collect();
    List { items }
}

#[test]
fn random_trees_read_back() {
    let mut rng = Rng::new(7);
    let unset = |_: &str| None::<&str>;
    let named = |n: &str| Some(format!("<{n}>"));
    for _ in 0..2_000 {
        let tree = gen_list(&mut rng);
        let text = tree.to_string();
        let parsed = parse(&text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
        // Same meaning under any variable values...
        // (Errors compare without their offsets: the tree has no spans.)
        let same = |a: Result<List, ExpandError>, b: Result<List, ExpandError>| a.map_err(drop) == b.map_err(drop);
        assert!(same(expand(&parsed, named), expand(&tree, named)), "{text:?}");
        assert!(same(expand(&parsed, env), expand(&tree, env)), "{text:?}");
        assert!(same(expand(&parsed, unset), expand(&tree, unset)), "{text:?}");
        // ...and the parsed tree is written back canonically.
        check(&text);
    }
}

#[test]
fn random_bytes_through_the_editor() {
    let mut rng = Rng::new(99);
    for round in 0..200 {
        let max = [0, 1, 4, 16, 1024][round % 5];
        let mut ed = LineEditor::with_limits(max, 4);
        // Favour the bytes the editor cares about.
        let bytes: Vec<u8> = (0..2_000)
            .map(|_| match rng.index(4) {
                0 => *rng.pick(b"\r\n\x03\x04\x08\x7f\x15\x17\x1b[AB~0"),
                1 => *rng.pick(&[0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0xa6, 0x80, 0xff]),
                _ => rng.next() as u8,
            })
            .collect();
        let mut out = Vec::new();
        for &b in &bytes {
            out.clear();
            let ev = ed.feed(b, &mut out);
            assert!(std::str::from_utf8(&out).is_ok(), "echo is always UTF-8");
            assert!(ed.line().len() <= max);
            assert!(!ed.line().chars().any(char::is_control));
            if let Some(Event::Line(l)) = ev {
                assert!(l.len() <= max && !l.chars().any(char::is_control));
                // Whatever the line, the parser copes.
                check(&l);
            }
        }
        assert!(ed.history().len() <= 4);
    }
}

#[test]
fn editor_survives_an_endless_escape_sequence_and_nuls() {
    let mut ed = LineEditor::new();
    let mut input = b"\x1b[".to_vec();
    input.extend(std::iter::repeat_n(b';', 100_000));
    input.extend(std::iter::repeat_n(0u8, 1_000));
    input.extend_from_slice(b"ok\r");
    let (ev, _) = feed_all(&mut ed, &input);
    assert_eq!(ev, [Event::Line("ok".into())]);
}
