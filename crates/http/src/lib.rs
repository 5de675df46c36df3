//! HTTP/1.0 and HTTP/1.1 as Oxok's two web servers speak it: the socket
//! server `httpd` and the specialised server `cheetah` share every rule
//! here, so they answer the same request with the same status.
//!
//! * [`Parser`] takes a connection's bytes as they arrive, in pieces of any
//!   size, and yields a [`Request`] or the [`Status`] that refuses it:
//!   414 for a target longer than [`Limits::max_target`], 431 for a header
//!   section longer than [`Limits::max_headers_bytes`] (or more lines than
//!   [`Limits::max_header_lines`]), 413 for a body longer than
//!   [`Limits::max_body`], 405 for a method other than `GET` and `HEAD`, 505
//!   for an HTTP version other than 1.0 and 1.1, 501 for a transfer coding,
//!   400 for anything malformed (a line not ended by CRLF included).
//! * [`path::normalise`] turns a request target into a file path, refusing
//!   one that climbs above the root (`/../`), encoded or not.
//! * [`Request::keep_alive`] applies the persistence rules of both versions.
//! * [`date`] parses the three date forms of RFC 9110 and formats the
//!   preferred one (`If-Modified-Since`, `Last-Modified`).
//! * [`mime::content_type`] names a file's type by its extension.
//! * [`response`] writes status lines and header sections (the canned heads
//!   Cheetah keeps with a cached file included).
#![no_std]

extern crate alloc;

pub mod date;
pub mod mime;
pub mod path;
pub mod response;

mod parser;
mod status;

pub use parser::{Event, Limits, Method, Parser, Request, Version};
pub use status::Status;

#[cfg(test)]
mod tests;
