//! Parameter expansion: values, dropping of empty unquoted words, no field
//! splitting, redirect targets, lookup calls, and late expansion.

mod common;
use std::collections::HashMap;

use common::env;
use oxok_shparse::{Command, ExpandError, List, Pipeline, Redirect, Simple, Target, Word, expand, parse};

/// The one simple command of `line`, expanded with `common::env`.
fn simple(line: &str) -> Simple {
    let cmd = parse(line).unwrap();
    let mut list = expand(&cmd, env).unwrap();
    assert_eq!(list.items.len(), 1);
    let mut p = list.items.remove(0).and_or.first;
    assert_eq!(p.commands.len(), 1);
    p.commands.remove(0)
}

fn argv(line: &str) -> Vec<String> {
    simple(line).argv
}

#[test]
fn parameters() {
    assert_eq!(
        argv("echo $HOME ${HOME}/x \"$HOME\" '$HOME' \\$HOME"),
        ["echo", "/home", "/home/x", "/home", "$HOME", "$HOME"]
    );
    assert_eq!(argv("echo $? ${?} \"$?\" x$?y"), ["echo", "0", "0", "0", "x0y"]);
    assert_eq!(argv("echo $1 $10 ${10} $$"), ["echo", "one", "one0", "ten", "42"]);
    assert_eq!(argv("echo $HOME$HOME"), ["echo", "/home/home"]);
    assert_eq!(argv("echo \"<$HOME>\""), ["echo", "</home>"]);
    assert_eq!(argv("echo a$ $ $/"), ["echo", "a$", "$", "$/"]);
}

#[test]
fn unset_and_empty() {
    assert_eq!(argv("echo $NOPE x"), ["echo", "x"]);
    assert_eq!(argv("echo $EMPTY x"), ["echo", "x"]);
    assert_eq!(argv("echo ${NOPE}${EMPTY}"), ["echo"]);
    assert_eq!(argv("echo \"$NOPE\" x"), ["echo", "", "x"]);
    assert_eq!(argv("echo ''$NOPE"), ["echo", ""]);
    assert_eq!(argv("echo $NOPE\"\""), ["echo", ""]);
    assert_eq!(argv("echo x$NOPE"), ["echo", "x"]);
    assert_eq!(argv("echo \"\" ''"), ["echo", "", ""]);
    // The command name can come from a variable, or vanish.
    assert_eq!(argv("$NOPE echo hi"), ["echo", "hi"]);
    assert!(argv("$NOPE $EMPTY").is_empty());
}

#[test]
fn no_field_splitting_no_reparsing() {
    assert_eq!(argv("echo $SP"), ["echo", "a b"]);
    assert_eq!(argv("echo $D $Q"), ["echo", "$HOME", "\"it's\""]);
    assert_eq!(argv("echo * ~"), ["echo", "*", "~"]);
}

#[test]
fn assignments() {
    let s = simple("X=$HOME Y=$NOPE Z=\"$SP\"x W= cmd V=1");
    let want: Vec<(String, String)> = [("X", "/home"), ("Y", ""), ("Z", "a bx"), ("W", "")]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(s.assignments, want);
    assert_eq!(s.argv, ["cmd", "V=1"]);
    let s = simple("A=1");
    assert!(s.argv.is_empty() && s.redirects.is_empty());
}

#[test]
fn redirect_targets() {
    let s = simple("cmd <$HOME/in >\"$SP\" >>x$NOPE 2>&1 3<&0");
    assert_eq!(
        s.redirects,
        [
            Redirect { fd: 0, target: Target::Read("/home/in".into()) },
            Redirect { fd: 1, target: Target::Write("a b".into()) },
            Redirect { fd: 1, target: Target::Append("x".into()) },
            Redirect { fd: 2, target: Target::Dup(1) },
            Redirect { fd: 3, target: Target::Dup(0) },
        ]
    );
    // Quoted but empty: an empty name (the shell's open will fail).
    assert_eq!(simple("cmd > \"$NOPE\"").redirects[0].target, Target::Write(String::new()));
    // Unquoted and empty: there is no name at all.
    let cmd = parse("cmd > $NOPE").unwrap();
    assert_eq!(expand(&cmd, env), Err(ExpandError::AmbiguousRedirect { pos: 6 }));
    let cmd = parse("a | b 2>>$EMPTY").unwrap();
    let e = expand(&cmd, env).unwrap_err();
    assert_eq!(e.pos(), 9);
    assert_eq!(e.to_string(), "ambiguous redirect at byte 9");
}

#[test]
fn the_lookup_sees_each_name_once_in_order() {
    let cmd = parse("A=$a cmd $b ${c} \"$d\" $? $1 ${10} <$e >&2").unwrap();
    let mut seen = Vec::new();
    expand(&cmd, |name: &str| {
        seen.push(name.to_string());
        None::<&str>
    })
    .unwrap_err(); // `<$e` is empty
    assert_eq!(seen, ["a", "b", "c", "d", "?", "1", "10", "e"]);
}

#[test]
fn lookups_may_return_owned_or_borrowed_strings() {
    let cmd = parse("echo $abc").unwrap();
    let owned = expand(&cmd, |n: &str| Some(n.to_uppercase())).unwrap();
    assert_eq!(owned.items[0].and_or.first.commands[0].argv, ["echo", "ABC"]);
    let vars: HashMap<String, String> = [("abc".to_string(), "map".to_string())].into();
    let borrowed = expand(&cmd, |n: &str| vars.get(n)).unwrap();
    assert_eq!(borrowed.items[0].and_or.first.commands[0].argv, ["echo", "map"]);
    // A `&mut` closure can be reused.
    let mut calls = 0;
    let mut counting = |_: &str| {
        calls += 1;
        Some("v")
    };
    expand(&cmd, &mut counting).unwrap();
    expand(&cmd, &mut counting).unwrap();
    assert_eq!(calls, 2);
}

#[test]
fn word_level() {
    let w = &parse("x\"$A\"y").unwrap().items[0].and_or.first.commands[0].argv[0];
    assert_eq!(w.expand(|_: &str| Some("-")), "x-y");
    assert_eq!(w.expand_arg(|_: &str| None::<&str>), Some("xy".into()));
    let unquoted =
        Word { parts: parse("$A").unwrap().items[0].and_or.first.commands[0].argv[0].parts.clone(), ..Word::default() };
    assert_eq!(unquoted.expand_arg(|_: &str| None::<&str>), None);
    assert_eq!(unquoted.expand(|_: &str| None::<&str>), "");
    let mut built = Word::literal("a");
    built.push_var("B", true);
    built.push_lit("c", true);
    built.push_lit("d", true);
    assert_eq!(built.parts.len(), 3);
    assert_eq!(built.to_string(), "a\"${B}\"'cd'");
    assert_eq!(built.expand(|_: &str| Some("b")), "abcd");
}

/// A toy executor that expands each pipeline just before "running" it,
/// the way the shell should: `$?` and assignments made by earlier commands
/// are seen by later ones.
fn run(cmd: &Command) -> Vec<Vec<String>> {
    let mut vars: HashMap<String, String> = HashMap::new();
    let mut status = 0;
    let mut ran = Vec::new();
    for item in &cmd.items {
        for (conn, p) in item.and_or.pipelines() {
            let skip = match conn {
                Some(oxok_shparse::Connector::And) => status != 0,
                Some(oxok_shparse::Connector::Or) => status == 0,
                None => false,
            };
            if skip {
                continue;
            }
            let status_text = status.to_string();
            let p: Pipeline =
                p.expand(|n: &str| if n == "?" { Some(status_text.clone()) } else { vars.get(n).cloned() }).unwrap();
            for c in &p.commands {
                if c.argv.is_empty() {
                    for (k, v) in &c.assignments {
                        vars.insert(k.clone(), v.clone());
                    }
                }
                status = match c.argv.first().map(String::as_str) {
                    Some("false") => 1,
                    _ => 0,
                };
                ran.push(c.argv.clone());
            }
        }
    }
    ran
}

#[test]
fn expanding_late_sees_earlier_commands() {
    let cmd = parse("false; echo $?; X=1; echo $X \"$?\"; false || echo $? && echo $?").unwrap();
    let ran = run(&cmd);
    let want: &[&[&str]] =
        &[&["false"], &["echo", "1"], &[], &["echo", "1", "0"], &["false"], &["echo", "1"], &["echo", "0"]];
    assert_eq!(ran, want);
    // Expanding the whole line up front cannot do that.
    let early = expand(&cmd, |n: &str| (n == "?").then_some("0")).unwrap();
    assert_eq!(early.items[1].and_or.first.commands[0].argv, ["echo", "0"]);
}

#[test]
fn expanded_display_reads_back() {
    let lines = [
        "echo $SP \"$Q\" $D 'a b' x$NOPE \"\" > \"$SP\" 2>&1",
        "X=$SP A='#' cmd '#' a=b $HOME* | wc -l >>$HOME/log",
        "a && b || c & d; e",
        "\"X=1\" $D",
    ];
    for line in lines {
        let expanded: List = expand(&parse(line).unwrap(), env).unwrap();
        let text = expanded.to_string();
        let again = expand(&parse(&text).unwrap(), |_: &str| None::<&str>).unwrap();
        assert_eq!(again, expanded, "{line:?} → {text:?}");
    }
    let expanded = expand(&parse("X=\"$SP\" \"Y=1\" $Q").unwrap(), env).unwrap();
    assert_eq!(expanded.to_string(), r#"X='a b' 'Y=1' '"it'\''s"'"#);
}
