//! Content types by file extension.

/// The type served when the extension is unknown.
pub const DEFAULT: &str = "application/octet-stream";

const TYPES: &[(&str, &str)] = &[
    ("html", "text/html; charset=utf-8"),
    ("htm", "text/html; charset=utf-8"),
    ("txt", "text/plain; charset=utf-8"),
    ("css", "text/css"),
    ("js", "text/javascript"),
    ("mjs", "text/javascript"),
    ("json", "application/json"),
    ("xml", "application/xml"),
    ("svg", "image/svg+xml"),
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("ico", "image/x-icon"),
    ("webp", "image/webp"),
    ("pdf", "application/pdf"),
    ("wasm", "application/wasm"),
    ("md", "text/markdown; charset=utf-8"),
];

/// The content type of a file named `path` (by its last extension, case
/// ignored); [`DEFAULT`] when there is none or it is unknown.
pub fn content_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some(dot) = name.rfind('.') else { return DEFAULT };
    if dot == 0 {
        return DEFAULT; // a dot file, no extension
    }
    let ext = &name[dot + 1..];
    TYPES.iter().find(|(e, _)| e.eq_ignore_ascii_case(ext)).map_or(DEFAULT, |(_, t)| t)
}
