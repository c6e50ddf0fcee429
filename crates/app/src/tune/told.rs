//! A search's side for a shell that shows no run's progress, only lines: its
//! runs on a runtime the shell holds, stopped by one switch, and every line
//! (the rounds, the largest-batch probes) handed to one function. The MCP
//! server's queue and the GPU session search through it; the terminal and
//! the window, which show each run live, wrap it ([`Told::run_showing`]).

use tokio::runtime::Runtime;
use tokio::sync::watch;
use trainbench_runner::RunnerOptions;

use super::TuneShell;
use crate::batch_words::Narrated;
use crate::error::AppResult;
use crate::execute::{self, Silent};
use crate::host::Host;
use crate::job::{Finished, Job};
use crate::sweep::SweepPlan;
use crate::workspace::Workspace;
use crate::Progress;

/// Runs on `rt` with `opts`, stopped when `stop` turns on; lines to `say`.
pub struct Told<'r, F: FnMut(String)> {
    pub rt: &'r Runtime,
    pub stop: watch::Receiver<bool>,
    pub opts: RunnerOptions,
    pub say: F,
}

impl<F: FnMut(String)> Told<'_, F> {
    /// Runs `job` as [`TuneShell::run`] does, its events to `progress`: for
    /// a shell that shows each run (a progress bar, a live line) and keeps
    /// the rest of this one.
    pub fn run_showing(
        &self,
        ws: &mut Workspace,
        host: &Host,
        job: &Job,
        progress: &mut dyn Progress,
    ) -> AppResult<Finished> {
        self.rt.block_on(execute::run_job(
            ws,
            host,
            job,
            self.opts,
            progress,
            self.stop.clone(),
        ))
    }
}

impl<F: FnMut(String)> TuneShell for Told<'_, F> {
    fn run(&mut self, ws: &mut Workspace, host: &Host, job: &Job) -> AppResult<Finished> {
        self.run_showing(ws, host, job, &mut Silent)
    }

    fn say(&mut self, line: String) {
        (self.say)(line);
    }

    fn cancelled(&self) -> bool {
        // Lets a task that turns the switch run if its moment came between
        // two runs.
        self.rt.block_on(tokio::task::yield_now());
        *self.stop.borrow()
    }

    fn search_batches(
        &mut self,
        ws: &mut Workspace,
        host: &Host,
        plan: &mut SweepPlan,
        sweep: i64,
    ) -> AppResult<()> {
        let mut narrated = Narrated { say: &mut self.say };
        self.rt.block_on(ws.search_batches(
            host,
            plan,
            sweep,
            self.opts,
            self.stop.clone(),
            &mut narrated,
        ))
    }
}
