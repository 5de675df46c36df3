//! Environment variables (`KEY=value`), private to the process and passed
//! on to every child [`spawn`](crate::exec::spawn) starts (and copied by
//! fork). The libOS itself keeps a few here: `OXOK_FD<n>` (how descriptor
//! `n` reopens in a child) and the ids of servers such as the file server.

use crate::Args;
use alloc::string::String;
use alloc::vec::Vec;
use spin::Mutex;

/// The loaded variables; `None` until first used (a program that never
/// looks at its environment does not touch the heap for it).
static VARS: Mutex<Option<Vec<String>>> = Mutex::new(None);
/// The initial stack's arguments, to read envp from on first use.
static INITIAL: Mutex<Option<Args>> = Mutex::new(None);

/// Remembers where the initial environment is (called once by the runtime).
pub(crate) fn init(args: Args) {
    *INITIAL.lock() = Some(args);
}

fn with<R>(f: impl FnOnce(&mut Vec<String>) -> R) -> R {
    let initial = *INITIAL.lock();
    let mut vars = VARS.lock();
    let v = vars.get_or_insert_with(|| initial.map(|a| a.envp().map(String::from).collect()).unwrap_or_default());
    f(v)
}

fn key_of(entry: &str) -> &str {
    entry.split_once('=').map_or(entry, |(k, _)| k)
}

/// The value of `key`, if set.
pub fn var(key: &str) -> Option<String> {
    with(|v| v.iter().find(|e| key_of(e) == key).map(|e| String::from(&e[key.len() + 1..])))
}

/// Sets `key` to `value` (`key` must not contain `=` or NUL).
pub fn set_var(key: &str, value: &str) {
    if key.is_empty() || key.contains(['=', '\0']) || value.contains('\0') {
        return;
    }
    with(|v| {
        v.retain(|e| key_of(e) != key);
        v.push(alloc::format!("{key}={value}"));
    });
}

/// Removes `key`.
pub fn remove_var(key: &str) {
    with(|v| v.retain(|e| key_of(e) != key));
}

/// Every variable, as `KEY=value`.
pub fn vars() -> Vec<String> {
    with(|v| v.clone())
}

/// Most variables passed to a child.
pub const MAX_PASSED: usize = 64;

/// Calls `f` with the variables as `KEY=value` strings (at most
/// [`MAX_PASSED`]), without touching the heap while the environment is
/// still the one the program started with.
pub fn with_strs<R>(f: impl FnOnce(&[&str]) -> R) -> R {
    let initial = *INITIAL.lock();
    let vars = VARS.lock();
    let mut strs: [&str; MAX_PASSED] = [""; MAX_PASSED];
    let mut n = 0;
    match vars.as_ref() {
        Some(v) => {
            let owned = v.clone();
            drop(vars);
            for (slot, e) in strs.iter_mut().zip(owned.iter()) {
                *slot = e.as_str();
                n += 1;
            }
            f(&strs[..n])
        }
        None => {
            for (slot, e) in strs.iter_mut().zip(initial.iter().flat_map(|a| a.envp())) {
                *slot = e;
                n += 1;
            }
            drop(vars);
            f(&strs[..n])
        }
    }
}
