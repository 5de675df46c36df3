//! Host tests for the slot vector: placement, ownership changes,
//! generations, errors, and a model check.

mod basic;
mod model;
