//! Host tests for the bitmap allocator: edge cases and a model check.

mod basic;
mod model;
