//! The sample documents both servers can write (`--samples`) and the host
//! tests and benchmark fetch: every byte is a function of the file's name
//! and offset, so a client checks what it got without a copy.

use alloc::format;
use alloc::string::String;

/// (name, length) of each sample.
pub const SAMPLES: &[(&str, usize)] = &[("1k.txt", 1024), ("10k.txt", 10 * 1024), ("100k.bin", 100 * 1024)];

/// Byte `i` of the sample named `name`: text lines for `.txt`, a pattern of
/// byte values for the rest.
pub fn sample_byte(name: &str, i: usize) -> u8 {
    if name.ends_with(".txt") {
        const LINE: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz\n";
        LINE[i % LINE.len()]
    } else {
        ((i * 7 + 13) % 251) as u8
    }
}

/// An `index.html` linking every sample (`title` in its heading).
pub fn index_html(title: &str) -> String {
    let mut s = format!("<!doctype html>\n<title>{title}</title>\n<h1>{title}</h1>\n<ul>\n");
    for (name, len) in SAMPLES {
        s.push_str(&format!("<li><a href=\"/{name}\">{name}</a> ({len} bytes)\n"));
    }
    s.push_str("</ul>\n");
    s
}
