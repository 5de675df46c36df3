//! Background jobs (`a | b &`): pipelines started without waiting. Each job
//! keeps its stages' children; before each prompt the shell looks at their
//! rows in the kernel's exposed environment table (no system call) and
//! reaps the jobs whose every program has ended, reporting their status.
//! `jobs` lists what is still there, running or stopped (`^Z`), `wait`
//! waits for every running one, `fg [%N]` brings a job back to the
//! foreground (continuing it), `bg [%N]` continues a stopped one in the
//! background.

use crate::pipeline::{self, Outcome};
use alloc::string::String;
use alloc::vec::Vec;
use oxok_libos::abi::ENV_ZOMBIE;
use oxok_libos::fd::pipe::Feeder;
use oxok_libos::{eprintln, exposed, println};

/// One background job.
struct Job {
    id: u32,
    text: String,
    stages: Vec<Outcome>,
    /// Stopped with `^Z` (no CPU time until `fg` or `bg`).
    stopped: bool,
    /// Its keyboard feed, if it was stopped in the foreground.
    feeder: Option<Feeder>,
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
        self.list.push(Job { id, text, stages, stopped: false, feeder: None });
        (id, last)
    }

    /// Adds a job stopped in the foreground with `^Z`; prints `[id] stopped`.
    pub fn add_stopped(&mut self, text: String, stages: Vec<Outcome>, feeder: Option<Feeder>) {
        let id = self.list.last().map_or(1, |j| j.id + 1);
        println!("[{id}] stopped  {text}");
        self.list.push(Job { id, text, stages, stopped: true, feeder });
    }

    /// The job `%N` (or `N`) names, or the newest; its index. Complains
    /// and gives `None` if there is none.
    fn pick(&self, what: &str, arg: Option<&str>) -> Option<usize> {
        let found = match arg {
            None => self.list.len().checked_sub(1),
            Some(a) => {
                let n = a.strip_prefix('%').unwrap_or(a).parse::<u32>().ok();
                self.list.iter().position(|j| Some(j.id) == n)
            }
        };
        if found.is_none() {
            eprintln!("{what}: {}: no such job", arg.unwrap_or("current"));
        }
        found
    }

    /// `kill ... %N`: each job spec among `argv`'s operands becomes the
    /// process ids of that job's running programs, so the `kill` tool
    /// signals the whole job (the shell, their parent, forwards it).
    /// `None` after reporting a job that does not exist.
    pub fn job_specs_to_pids(&self, argv: Vec<String>) -> Option<Vec<String>> {
        let mut out = Vec::with_capacity(argv.len());
        for arg in argv {
            let Some(spec) = arg.strip_prefix('%') else {
                out.push(arg);
                continue;
            };
            let job = spec.parse::<u32>().ok().and_then(|n| self.list.iter().find(|j| j.id == n));
            let Some(job) = job else {
                eprintln!("kill: {arg}: no such job");
                return None;
            };
            for stage in &job.stages {
                if let Outcome::Running { child, .. } = stage {
                    out.push(alloc::format!("{}", child.id));
                }
            }
        }
        Some(out)
    }

    /// `fg [%N]`: takes the job out of the list, continued, with its
    /// keyboard feed, for the shell to run in the foreground.
    pub fn take_for_foreground(&mut self, arg: Option<&str>) -> Option<(String, Vec<Outcome>, Option<Feeder>)> {
        let i = self.pick("fg", arg)?;
        let job = self.list.remove(i);
        println!("{}", job.text);
        crate::term::set_running(&job.stages, true);
        Some((job.text, job.stages, job.feeder))
    }

    /// `bg [%N]`: continues a stopped job in the background.
    pub fn continue_in_background(&mut self, arg: Option<&str>) -> i32 {
        let Some(i) = self.pick("bg", arg) else { return 1 };
        let job = &mut self.list[i];
        if job.stopped {
            crate::term::set_running(&job.stages, true);
            job.stopped = false;
        }
        println!("[{}] {} &", job.id, job.text);
        0
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
            let state = if job.stopped { "stopped" } else { "running" };
            println!("[{}] {state}  envs {}  {}", job.id, envs.join(","), job.text);
        }
        0
    }

    /// `wait`: waits for every running job (stopped ones stay listed); the
    /// status of the last one (0 if none).
    pub fn wait_all(&mut self) -> i32 {
        let mut status = 0;
        let (stopped, running): (Vec<Job>, Vec<Job>) =
            core::mem::take(&mut self.list).into_iter().partition(|j| j.stopped);
        self.list = stopped;
        for job in running {
            status = job.reap();
        }
        status
    }
}
