//! Host tests of the HTTP crate.

mod dates;
mod parse;
mod paths;
mod responses;
