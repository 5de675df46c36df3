//! Host tests of Cheetah's core: a scripted client against the server over
//! a link that may lose frames.

mod client;
mod pieces;
mod tcp;
