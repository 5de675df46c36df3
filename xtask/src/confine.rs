//! The source checks of `cargo xtask lint` that clippy cannot make: the
//! libOS policy crate (`libos/src`) holds no `unsafe` (it is all in the
//! runtime, `libos/rt`), and no `syscall` instruction or call number is
//! written by hand outside the generated stubs (`libos/rt/src/sys.rs`,
//! from the call table; naked code composes `oxok_abi::syscall_asm!`). The
//! kernel's test programs (`apps/tests`) issue raw calls on purpose and are
//! not checked.

use std::path::{Path, PathBuf};

/// Where `unsafe` may not appear.
const NO_UNSAFE: &[&str] = &["libos/src"];
/// Where no call may be hand-written.
const NO_HAND_CALLS: &[&str] = &["libos", "apps"];
/// Left out of [`NO_HAND_CALLS`]: programs that attack the kernel with raw
/// calls on purpose.
const RAW_CALLERS: &[&str] = &["apps/tests"];
/// The generated stubs: the one place a `syscall` instruction is written.
const STUBS: &str = "libos/rt/src/sys.rs";

/// One finding: file, line number, what.
pub(crate) type Finding = (PathBuf, usize, &'static str);

/// Every finding under the workspace root `root`.
pub(crate) fn check(root: &Path) -> Result<Vec<Finding>, String> {
    let mut out = Vec::new();
    for dir in NO_UNSAFE {
        for file in rust_files(&root.join(dir))? {
            let text = read(&file)?;
            out.extend(unsafe_lines(&text).into_iter().map(|n| (file.clone(), n, "`unsafe` in the libOS")));
        }
    }
    for dir in NO_HAND_CALLS {
        for file in rust_files(&root.join(dir))? {
            if RAW_CALLERS.iter().any(|r| file.starts_with(root.join(r))) || file == root.join(STUBS) {
                continue;
            }
            let text = read(&file)?;
            out.extend(hand_calls(&text).into_iter().map(|(n, what)| (file.clone(), n, what)));
        }
    }
    Ok(out)
}

fn read(file: &Path) -> Result<String, String> {
    std::fs::read_to_string(file).map_err(|e| format!("could not read {}: {e}", file.display()))
}

/// The `.rs` files under `dir` (none if it does not exist), sorted.
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries {
            let path = e.map_err(|e| format!("could not list {}: {e}", d.display()))?.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    todo.push(path);
                }
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// A line's code and its string literals' contents, with `//` comments
/// dropped (a line-based reading, enough for this tree's style: no block
/// comments, no multi-line strings around these words).
fn split_line(line: &str) -> (String, Vec<String>) {
    let (mut code, mut strings) = (String::new(), Vec::new());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => break,
            '\'' => {
                // A char literal ('x', '\n', '"') or a lifetime: skip a
                // literal whole so its quote is not a string's start.
                let rest: String = chars.clone().take(3).collect();
                let len = if rest.starts_with('\\') {
                    rest.find('\'').map(|i| i + 1)
                } else {
                    (rest.chars().nth(1) == Some('\'')).then_some(2)
                };
                match len {
                    Some(n) => {
                        for _ in 0..n {
                            chars.next();
                        }
                        code.push_str("' '");
                    }
                    None => code.push('\''),
                }
            }
            '"' => {
                let mut s = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some(e) = chars.next() {
                                s.push(if e == 'n' { '\n' } else { e });
                            }
                        }
                        '"' => break,
                        c => s.push(c),
                    }
                }
                strings.push(s);
                code.push_str("\"\"");
            }
            c => code.push(c),
        }
    }
    (code, strings)
}

/// True if `word` stands alone in `text` (not part of an identifier).
fn has_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// Lines (from 1) whose code uses `unsafe` (a block, fn, impl, trait,
/// extern block or attribute; `unsafe_code` in a lint level is no use).
pub(crate) fn unsafe_lines(text: &str) -> Vec<usize> {
    text.lines().enumerate().filter(|(_, l)| has_word(&split_line(l).0, "unsafe")).map(|(i, _)| i + 1).collect()
}

/// Lines (from 1) that write a call by hand: a string holding the
/// `syscall` instruction, or a call's number made an assembly operand
/// (`const Call::….number()`; comparing an exported state's `rax` with a
/// number is no call).
pub(crate) fn hand_calls(text: &str) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let (code, strings) = split_line(line);
        let instruction = strings.iter().any(|s| s.split(['\n', ';']).any(|piece| piece.trim() == "syscall"));
        if instruction {
            out.push((i + 1, "a `syscall` instruction outside the generated stubs"));
        }
        if code.contains("const Call::") && code.contains(".number()") {
            out.push((i + 1, "a call number outside the generated stubs"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_is_found_in_code_only() {
        // The block on line 4 is spelled in pieces so that no tool reading
        // this file takes the test's text for an unsafe block of xtask's.
        let text = concat!(
            "// unsafe in a comment\n#![forbid(unsafe_code)]\nlet s = \"unsafe\";\n    uns",
            "afe { x() }\n#[unsafe(no_mangle)]\nunsafe impl Send for X {}\nfn f() {} // unsafe"
        );
        assert_eq!(unsafe_lines(text), [4, 5, 6]);
        assert_eq!(unsafe_lines("let c = '\"'; unsafe fn g() {}"), [1]);
    }

    #[test]
    fn hand_written_calls_are_found() {
        let text = "asm!(\"syscall\", in(\"rax\") n);\n\"mov rax, 1\\nsyscall\\n\",\n// \"syscall\"\n\
                    let k = Kind::ForeignSyscall; // a syscall upcall\nreply = const Call::pct_reply.number(),\n\
                    oxok_abi::syscall_asm!(env_run(env_slot = in_place)),\nlet w = st[0] == Call::pct_wait.number();";
        let lines: Vec<usize> = hand_calls(text).iter().map(|f| f.0).collect();
        assert_eq!(lines, [1, 2, 5]);
    }

    #[test]
    fn the_tree_is_clean() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let findings = check(&root).unwrap();
        assert!(findings.is_empty(), "{findings:?}");
        // The checked places exist (the check is not vacuous).
        assert!(!rust_files(&root.join("libos/src")).unwrap().is_empty());
        assert!(hand_calls(&read(&root.join(STUBS)).unwrap()).iter().any(|f| f.1.contains("syscall")));
    }
}
