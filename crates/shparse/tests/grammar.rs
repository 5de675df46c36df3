//! Golden tests of the grammar: each line and the exact tree it parses to
//! (in the `common::dump` notation), and that writing the tree back as text
//! reads back as the same tree.

mod common;
use common::dump;
use oxok_shparse::{Part, Span, Target, parse};

/// (input, dump of the tree).
const GOLDEN: &[(&str, &str)] = &[
    // Blank input.
    ("", ""),
    ("   \t ", ""),
    ("# only a comment", ""),
    ("\n\n\n", ""),
    ("  # comment\n\n", ""),
    // Words.
    ("ls", "{[ls]}"),
    ("ls -l /bin", "{[ls -l /bin]}"),
    ("  ls\t-l   /bin  ", "{[ls -l /bin]}"),
    ("echo {a,b} * ~ !x a=b %", "{[echo {a,b} * ~ !x a=b %]}"),
    ("echo héllo 日本", "{[echo héllo 日本]}"),
    // Single quotes: everything literal.
    ("echo 'a b' c", "{[echo 'a b' c]}"),
    (r#"echo 'a"b$X\'"#, r#"{[echo 'a"b$X\']}"#),
    ("echo 'a\nb'", "{[echo 'a\nb']}"),
    ("echo a'b'c", "{[echo a'b'c]}"),
    // Double quotes: \" \\ \$ escape, other backslashes stay.
    (r#"echo "a b""#, "{[echo 'a b']}"),
    (r#"echo "q\"b\\s\$x\n""#, r#"{[echo 'q"b\s$x\n']}"#),
    (r#"echo "it's""#, "{[echo 'it's']}"),
    (r#"echo "a""b" 'c'"d""#, "{[echo 'ab' 'cd']}"),
    // Empty quotes are empty arguments.
    (r#"echo "" ''"#, "{[echo '' '']}"),
    // (The dump puts the quoted-word marker first: x'' shows as ''x.)
    (r#"echo ""x x'' '''' "#, "{[echo ''x ''x '']}"),
    // Backslash outside quotes.
    (r"echo a\ b \$HOME \\ \'", r"{[echo a' 'b '$'HOME '\' ''']}"),
    (r"echo \é\#", "{[echo 'é#']}"),
    // Line continuation.
    ("a \\\n b", "{[a b]}"),
    ("ab\\\ncd", "{[abcd]}"),
    ("\"a\\\nb\"", "{['ab']}"),
    ("echo \\\n", "{[echo]}"),
    // Comments start only at a word start.
    ("echo a#b #c d", "{[echo a#b]}"),
    ("echo #", "{[echo]}"),
    ("echo x# y", "{[echo x# y]}"),
    ("echo '#x' \\#y", "{[echo '#x' '#'y]}"),
    ("a;#c\nb", "{[a]} {[b]}"),
    ("a #c ; b", "{[a]}"),
    // Parameters.
    ("echo $HOME ${HOME}x $HOMEx", "{[echo ${HOME} ${HOME}x ${HOMEx}]}"),
    ("echo $? $$ $# $! $* $@ $0 $1x ${10}", "{[echo ${?} ${$} ${#} ${!} ${*} ${@} ${0} ${1}x ${10}]}"),
    ("echo ${?} ${_a1}", "{[echo ${?} ${_a1}]}"),
    (r#"echo "$HOME/x" "${?}" "a$1""#, r#"{[echo "${HOME}"'/x' "${?}" 'a'"${1}"]}"#),
    // A `$` that starts no parameter is literal, and counts as quoted.
    ("echo a$ $ $-x $/ $%", "{[echo a'$' '$' '$'-x '$'/ '$'%]}"),
    (r#"echo $'x' $"y" "$""#, r#"{[echo '$x' '$y' '$']}"#),
    ("echo $\\\n$X", "{[echo '$'${X}]}"),
    (r#"echo ""$X $X"" '$X'"#, r#"{[echo ''${X} ''${X} '$X']}"#),
    ("echo $A$B", "{[echo ${A}${B}]}"),
    // Assignments: before the command name, name and `=` unquoted.
    ("X=1", "{[(X=1)]}"),
    ("X=#a Y=\\\n#b", "{[(X=#a) (Y=#b)]}"),
    ("X=1 Y= cmd Z=2", "{[(X=1) (Y=) cmd Z=2]}"),
    ("X=a=b cmd", "{[(X=a=b) cmd]}"),
    ("X='a b'$Y cmd", "{[(X='a b'${Y}) cmd]}"),
    ("X=\"\" cmd", "{[(X='') cmd]}"),
    ("'X'=1 cmd", "{['X'=1 cmd]}"),
    ("X\\=1", "{[X'='1]}"),
    ("\"X=1\"", "{['X=1']}"),
    ("$X=1", "{[${X}=1]}"),
    ("1X=2 _x9=v", "{[1X=2 _x9=v]}"),
    ("_x9=v", "{[(_x9=v)]}"),
    ("=x", "{[=x]}"),
    (">f X=1 cmd", "{[(X=1) cmd 1>f]}"),
    // Pipelines, and-or lists, sequences, background.
    ("a | b | c", "{[a] | [b] | [c]}"),
    ("a|b", "{[a] | [b]}"),
    ("a && b || c", "{[a] && [b] || [c]}"),
    ("a&&b||c&&d", "{[a] && [b] || [c] && [d]}"),
    ("a; b", "{[a]} {[b]}"),
    ("a;b;", "{[a]} {[b]}"),
    ("a ;", "{[a]}"),
    ("a & b &", "{[a]}& {[b]}&"),
    ("a&", "{[a]}&"),
    ("a && b &", "{[a] && [b]}&"),
    ("a | b && c | d & e; f", "{[a] | [b] && [c] | [d]}& {[e]} {[f]}"),
    ("a\nb\n", "{[a]} {[b]}"),
    ("a;\nb", "{[a]} {[b]}"),
    ("a |\n b", "{[a] | [b]}"),
    ("a &&\n\n b", "{[a] && [b]}"),
    ("a ||\n# why\n b", "{[a] || [b]}"),
    // Redirections.
    ("cat < in > out", "{[cat 0<in 1>out]}"),
    ("cat <in >>log 2>err 2>&1", "{[cat 0<in 1>>log 2>err 2>&1]}"),
    ("cmd 2>&1 >f", "{[cmd 2>&1 1>f]}"),
    ("cmd >&2 <&3 0<&4 5>&6", "{[cmd 1>&2 0>&3 0>&4 5>&6]}"),
    ("cmd 2>& 1", "{[cmd 2>&1]}"),
    ("cmd > 'my file' >> \"$HOME/log\"", r#"{[cmd 1>'my file' 1>>"${HOME}"'/log']}"#),
    ("cmd > $HOME/x", "{[cmd 1>${HOME}/x]}"),
    ("echo 2>x", "{[echo 2>x]}"),
    ("echo a2>x", "{[echo a2 1>x]}"),
    ("echo 2 >x", "{[echo 2 1>x]}"),
    ("echo \"2\">x", "{[echo '2' 1>x]}"),
    ("10>x cmd", "{[cmd 10>x]}"),
    ("cmd 007>x", "{[cmd 7>x]}"),
    (">f", "{[1>f]}"),
    ("< in", "{[0<in]}"),
    ("a | >f", "{[a] | [1>f]}"),
    ("cmd >a>b", "{[cmd 1>a 1>b]}"),
    ("cmd > '#f'", "{[cmd 1>'#f']}"),
    ("X=1 >f", "{[(X=1) 1>f]}"),
    // Everything together.
    (
        "X=1 ls -l \"$DIR\" 2>/dev/null | grep -v '^d' >> out && echo ok || echo \"failed: $?\" >&2; ps &",
        r#"{[(X=1) ls -l "${DIR}" 2>/dev/null] | [grep -v '^d' 1>>out] && [echo ok] || [echo 'failed: '"${?}" 1>&2]} {[ps]}&"#,
    ),
];

#[test]
fn golden_trees() {
    let mut failures = Vec::new();
    for &(line, want) in GOLDEN {
        match parse(line) {
            Ok(cmd) if dump(&cmd) == want => {}
            Ok(cmd) => failures.push(format!("{line:?}\n   got  {}\n   want {want}", dump(&cmd))),
            Err(e) => failures.push(format!("{line:?}: {e:?}")),
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn golden_trees_survive_display() {
    for &(line, _) in GOLDEN {
        let cmd = parse(line).unwrap();
        let text = cmd.to_string();
        let again = parse(&text).unwrap_or_else(|e| panic!("{line:?} → {text:?}: {e:?}"));
        assert_eq!(dump(&again), dump(&cmd), "{line:?} → {text:?}");
        assert_eq!(again.to_string(), text, "display is canonical");
    }
}

#[test]
fn canonical_display() {
    let cases = [
        ("a|b&&c||d;e&f", "a | b && c || d; e & f"),
        ("  X=1   cmd  'a b'  >f  2>&1 <in ", "X=1 cmd 'a b' >f 2>&1 <in"),
        ("echo $HOME \"$X\" '$Y' a\\ b", "echo ${HOME} \"${X}\" '$Y' a' 'b"),
        ("echo \"it's\"", r"echo 'it'\''s'"),
        ("cmd 0>f 1<g 2>>h 0<&1 1>&0 3<&4", "cmd 0>f 1<g 2>>h <&1 >&0 3>&4"),
        ("a &", "a &"),
        ("\"X=1\" a", "'X=1' a"),
        ("''$X", "''${X}"),
        ("echo '#' a#", "echo '#' a#"),
        ("X=#a cmd '#b' #c", "X=#a cmd '#b'"),
        ("''#a ''X=1 ''b", "''#a ''X=1 ''b"),
        ("", ""),
    ];
    for (line, want) in cases {
        assert_eq!(parse(line).unwrap().to_string(), want, "{line:?}");
    }
}

#[test]
fn word_spans_and_flags() {
    let cmd = parse("echo  'a b'x $Y").unwrap();
    let argv = &cmd.items[0].and_or.first.commands[0].argv;
    assert_eq!(argv[0].span, Span { start: 0, end: 4 });
    assert_eq!(argv[1].span, Span { start: 6, end: 12 });
    assert_eq!(argv[2].span, Span { start: 13, end: 15 });
    assert!(!argv[0].quoted && argv[1].quoted && !argv[2].quoted);
    assert_eq!(argv[0].as_plain(), Some("echo"));
    assert_eq!(argv[1].as_plain(), None);
    assert!(argv[2].has_vars() && !argv[1].has_vars());
    assert_eq!(
        argv[1].parts,
        [Part::Lit { text: "a b".into(), quoted: true }, Part::Lit { text: "x".into(), quoted: false }]
    );
}

#[test]
fn assignment_value_span_points_after_the_equals() {
    let cmd = parse("  AB=cd e").unwrap();
    let (name, value) = &cmd.items[0].and_or.first.commands[0].assignments[0];
    assert_eq!(name, "AB");
    assert_eq!(value.span, Span { start: 5, end: 7 });
}

#[test]
fn redirect_fields() {
    let cmd = parse("a 2>>log 4<&0 <x").unwrap();
    let r = &cmd.items[0].and_or.first.commands[0].redirects;
    assert_eq!((r[0].fd, matches!(&r[0].target, Target::Append(w) if w.as_plain() == Some("log"))), (2, true));
    assert_eq!((r[1].fd, &r[1].target), (4, &Target::Dup(0)));
    assert_eq!(r[2].fd, 0);
    assert!(matches!(&r[2].target, Target::Read(w) if w.span == Span { start: 15, end: 16 }));
}

#[test]
fn and_or_pipelines_iterator() {
    use oxok_shparse::Connector::{And, Or};
    let cmd = parse("a && b || c").unwrap();
    let conns: Vec<_> = cmd.items[0].and_or.pipelines().map(|(c, _)| c).collect();
    assert_eq!(conns, [None, Some(And), Some(Or)]);
    assert!(parse("# x").unwrap().is_empty());
}

#[test]
fn continuation_lines_join_with_newline() {
    // What a shell does with an incomplete line: read more and parse again.
    let first = "echo 'a";
    assert!(parse(first).unwrap_err().is_incomplete());
    let joined = format!("{first}\nb'");
    assert_eq!(dump(&parse(&joined).unwrap()), "{[echo 'a\nb']}");
    let first = "a |";
    assert!(parse(first).unwrap_err().is_incomplete());
    assert_eq!(dump(&parse(&format!("{first}\nb")).unwrap()), "{[a] | [b]}");
    let first = "echo x\\";
    assert!(parse(first).unwrap_err().is_incomplete());
    assert_eq!(dump(&parse(&format!("{first}\ny")).unwrap()), "{[echo xy]}");
}
