//! The kernel side of every call in the table, one function per call with
//! the name the table gives it. Each takes the call context and the
//! arguments as `u64`s and returns as many results as the table declares.

mod console;
mod env;
mod info;

pub use console::console_write;
pub use env::{env_exit, env_self};
pub use info::{mem_info, null};

use crate::arch::trapframe::TrapFrame;
use crate::env::{Env, EnvId};
use crate::state::Kernel;
use oxok_abi::Error;

/// Everything a call handler may touch.
pub struct Cx<'a> {
    /// The kernel state (locked).
    pub k: &'a mut Kernel,
    /// The caller's registers, as they will be on return.
    pub frame: &'a mut TrapFrame,
    /// The calling environment.
    pub caller: EnvId,
}

impl Cx<'_> {
    /// The calling environment.
    pub fn env(&mut self) -> Result<&mut Env, Error> {
        self.k.envs.get(self.caller).ok_or(Error::BadEnv)
    }
}
