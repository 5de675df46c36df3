//! Grouping: the files an HTML page references (`src="…"`, `href="…"`)
//! on the same server, so the cache loads them together with the page and
//! the browser's next requests find them there.

use alloc::string::String;
use alloc::vec::Vec;

use oxok_http::path;

/// Most references taken from one page.
pub const MAX_GROUP: usize = 32;

/// Whether `path` names an HTML page (by extension).
pub fn is_html(path: &str) -> bool {
    let lower = |s: &str| path.len() >= s.len() && path[path.len() - s.len()..].eq_ignore_ascii_case(s);
    lower(".html") || lower(".htm")
}

/// The local paths `html` (the page at `page`) references, normalised and
/// without duplicates, at most [`MAX_GROUP`]. Links to other servers,
/// other schemes, fragments and paths leaving the root are skipped.
pub fn references(html: &[u8], page: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let dir = &page[..page.rfind('/').map_or(0, |i| i + 1)];
    let mut i = 0;
    while i < html.len() && out.len() < MAX_GROUP {
        let Some(after) = attribute_at(html, i) else {
            i += 1;
            continue;
        };
        let (value, next) = value_at(html, after);
        i = next.max(i + 1);
        let Ok(v) = core::str::from_utf8(value) else { continue };
        let v = v.trim();
        if v.is_empty() || v.starts_with('#') || v.starts_with("//") || has_scheme(v) {
            continue;
        }
        let mut joined = String::new();
        if !v.starts_with('/') {
            joined.push_str(if dir.is_empty() { "/" } else { dir });
        }
        joined.push_str(v);
        let Ok(p) = path::normalise(&joined) else { continue };
        let p = path::with_index(&p);
        if p != page && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// If an attribute `src=` or `href=` starts at `i` (after a space, case
/// ignored), the index after its `=`.
fn attribute_at(html: &[u8], i: usize) -> Option<usize> {
    if i == 0 || !html[i - 1].is_ascii_whitespace() {
        return None;
    }
    for name in [&b"src"[..], b"href"] {
        let end = i + name.len();
        if end < html.len() && html[i..end].eq_ignore_ascii_case(name) {
            let mut j = end;
            while j < html.len() && html[j].is_ascii_whitespace() {
                j += 1;
            }
            if j < html.len() && html[j] == b'=' {
                return Some(j + 1);
            }
        }
    }
    None
}

/// The attribute value starting at `i` (quoted or not) and the index after it.
fn value_at(html: &[u8], mut i: usize) -> (&[u8], usize) {
    while i < html.len() && html[i].is_ascii_whitespace() {
        i += 1;
    }
    match html.get(i) {
        Some(&q @ (b'"' | b'\'')) => {
            let start = i + 1;
            let end = html[start..].iter().position(|&c| c == q).map_or(html.len(), |k| start + k);
            (&html[start..end], end + 1)
        }
        Some(_) => {
            let end =
                html[i..].iter().position(|&c| c.is_ascii_whitespace() || c == b'>').map_or(html.len(), |k| i + k);
            (&html[i..end], end)
        }
        None => (&[], i),
    }
}

fn has_scheme(v: &str) -> bool {
    match v.find(':') {
        Some(c) => {
            let s = &v[..c];
            !s.is_empty() && !s.contains('/') && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        }
        None => false,
    }
}
