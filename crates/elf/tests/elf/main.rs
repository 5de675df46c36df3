//! Host tests for the ELF parser: hand-built images, malformed variants,
//! mutation fuzzing and real binaries built on this machine.

mod builder;
mod fuzz;
mod malformed;
mod real;
mod shebang;
mod valid;
