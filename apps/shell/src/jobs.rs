//! Background jobs (`a | b &`): pipelines started without waiting. Each job
//! keeps its stages' children; before each prompt the shell looks at their
//! rows in the kernel's exposed environment table (no system call) and
//! reaps the jobs whose every program has ended, reporting their status.
//! `jobs` lists what is still running, `wait` waits for all of it.

use crate::pipeline::{self, Outcome};
use alloc::string::String;
use alloc::vec::Vec;
use oxok_libos::abi::ENV_ZOMBIE;
use oxok_libos::{exposed, println};

/// One background job.
struct Job {
    id: u32,
    text: String,
    stages: Vec<Outcome>,
}

impl Job {
    /// True once every program of the job has ended (its row is a zombie
    /// waiting to be reaped, or gone).
    fn finished(&self) -> bool {
        self.stages.iter().all(|s| match s {
            Outcome::Running { child, .. } => exposed::env_entry(child.id).is_none_or(|r| r.status == ENV_ZOMBIE),
            Outcome::Done(_) => true,
        })
    }

    /// Reaps the job (waiting if need be), prints its line, returns its
    /// status.
    fn reap(self) -> i32 {
        let status = pipeline::wait_all(self.stages);
        let state = if status == 0 { "done" } else { "exit" };
        println!("[{}] {state} (status {status})  {}", self.id, self.text);
        status
    }
}

/// The background jobs, oldest first.
#[derive(Default)]
pub struct Jobs {
    list: Vec<Job>,
}

impl Jobs {
    /// Adds a pipeline whose programs were spawned held; prints `[id] env`
    /// (the last program's environment id), then starts them, so the line
    /// comes before anything the job prints. Returns the job id and the
    /// last program's id (`$!`).
    pub fn add(&mut self, text: String, stages: Vec<Outcome>) -> (u32, Option<u64>) {
        let id = self.list.last().map_or(1, |j| j.id + 1);
        let last = stages.iter().rev().find_map(|s| match s {
            Outcome::Running { child, .. } => Some(child.id),
            Outcome::Done(_) => None,
        });
        match last {
            Some(env) => println!("[{id}] {env}"),
            None => println!("[{id}] (nothing left running)"),
        }
        pipeline::start_held(&stages);
        self.list.push(Job { id, text, stages });
        (id, last)
    }

    /// Reaps and reports every job that has finished.
    pub fn reap_finished(&mut self) {
        let mut i = 0;
        while i < self.list.len() {
            if self.list[i].finished() {
                self.list.remove(i).reap();
            } else {
                i += 1;
            }
        }
    }

    /// `jobs`: the jobs still running (finished ones are reported first).
    pub fn show(&mut self) -> i32 {
        self.reap_finished();
        for job in &self.list {
            let envs: Vec<String> = job
                .stages
                .iter()
                .filter_map(|s| match s {
                    Outcome::Running { child, .. } => Some(alloc::format!("{}", child.id)),
                    Outcome::Done(_) => None,
                })
                .collect();
            println!("[{}] running  envs {}  {}", job.id, envs.join(","), job.text);
        }
        0
    }

    /// `wait`: waits for every job; the status of the last one (0 if none).
    pub fn wait_all(&mut self) -> i32 {
        let mut status = 0;
        for job in core::mem::take(&mut self.list) {
            status = job.reap();
        }
        status
    }
}
