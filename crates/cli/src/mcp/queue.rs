//! The MCP server's run queue: one thread with its own connection to the
//! database runs what `start_run` and `start_tune` queued, one sweep or
//! search after another and each run after the last (the CLI's run loop,
//! `execute::run_jobs`, and the search's `Workspace::tune`), so two runs of
//! this server never share a device. When the server ends, the run that
//! trains is cancelled and the runs still queued are stored as cancelled.

use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::{oneshot, watch};
use trainbench_app::execute;
use trainbench_app::sweep::{Job, SweepPlan};
use trainbench_app::tune::{Told, TunePlan};
use trainbench_app::{Host, RunnerOptions, Workspace};

use crate::error::CliError;

/// What the queue runs.
pub enum Work {
    /// A sweep already stored as queued runs.
    Sweep {
        plan: Box<SweepPlan>,
        sweep: i64,
        jobs: Vec<Job>,
        opts: RunnerOptions,
        started: Instant,
    },
    /// A search, stored as it runs.
    Tune {
        plan: Box<TunePlan>,
        command: String,
        opts: RunnerOptions,
    },
}

/// Work and, for a caller that waits, where its `--json` document goes.
struct Order {
    work: Work,
    reply: Option<oneshot::Sender<Result<Value, CliError>>>,
}

/// The queue's thread, the way to it, and the switch that cancels.
pub struct Queue {
    orders: Mutex<Option<mpsc::Sender<Order>>>,
    cancel: watch::Sender<bool>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Queue {
    /// Starts the queue's thread on the database at `db`.
    pub fn start(db: PathBuf) -> Result<Queue, CliError> {
        let (orders, inbox) = mpsc::channel::<Order>();
        let (cancel, cancelled) = watch::channel(false);
        let thread = std::thread::Builder::new()
            .name("mcp-run-queue".into())
            .spawn(move || work_through(&db, &inbox, &cancelled))
            .map_err(|e| CliError::Failed(format!("cannot start the run queue: {e}")))?;
        Ok(Queue {
            orders: Mutex::new(Some(orders)),
            cancel,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Queues `work`; with `wait`, the receiver of its document once it ends.
    pub fn push(
        &self,
        work: Work,
        wait: bool,
    ) -> Result<Option<oneshot::Receiver<Result<Value, CliError>>>, CliError> {
        let (reply, answer) = if wait {
            let (tx, rx) = oneshot::channel();
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let orders = self
            .orders
            .lock()
            .map_err(|_| CliError::Failed("the run queue stopped".into()))?;
        orders
            .as_ref()
            .ok_or_else(|| CliError::Failed("the server is ending: nothing more is queued".into()))?
            .send(Order { work, reply })
            .map_err(|_| CliError::Failed("the run queue stopped".into()))?;
        Ok(answer)
    }

    /// Cancels what runs and what waits (each stored as cancelled) and
    /// waits for the queue's thread to end.
    pub fn stop(&self) {
        let _ = self.cancel.send(true);
        if let Ok(mut orders) = self.orders.lock() {
            orders.take();
        }
        let thread = self.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(t) = thread {
            let _ = t.join();
        }
    }
}

/// The queue's thread: every order in turn until the server lets go.
fn work_through(
    db: &std::path::Path,
    inbox: &mpsc::Receiver<Order>,
    cancel: &watch::Receiver<bool>,
) {
    let setup = Workspace::open_beside(db)
        .map_err(CliError::from)
        .and_then(|ws| Ok((ws, execute::runtime()?)));
    let host = Host::open();
    match setup {
        Ok((mut ws, runtime)) => {
            for order in inbox {
                let out = run_order(&mut ws, &host, &runtime, db, order.work, cancel);
                if let Some(reply) = order.reply {
                    let _ = reply.send(out);
                } else if let Err(e) = out {
                    eprintln!("trainbench: {}", error_words(&e));
                }
            }
        }
        Err(e) => {
            let words = error_words(&e);
            for order in inbox {
                if let Some(reply) = order.reply {
                    let _ = reply.send(Err(CliError::Failed(words.clone())));
                }
            }
        }
    }
}

fn error_words(e: &CliError) -> String {
    match e {
        CliError::BadInput { message, .. }
        | CliError::Failed(message)
        | CliError::Unfinished(message) => message.clone(),
    }
}

fn run_order(
    ws: &mut Workspace,
    host: &Host,
    runtime: &tokio::runtime::Runtime,
    db: &std::path::Path,
    work: Work,
    cancel: &watch::Receiver<bool>,
) -> Result<Value, CliError> {
    match work {
        Work::Sweep {
            plan,
            sweep,
            jobs,
            opts,
            started,
        } => {
            runtime.block_on(execute::run_jobs(
                ws,
                host,
                &jobs,
                opts,
                cancel.clone(),
                // Told to no one: the client reads each run when it ends.
                |_, _, _| execute::Silent,
                |_, _| {},
            ))?;
            let report = crate::run_cmd::report(ws, db, &plan, (sweep, &jobs), opts, started)?;
            Ok(report.json)
        }
        Work::Tune {
            plan,
            command,
            opts,
        } => {
            // Runs without progress shown (the client reads each run when
            // it ends), rounds said on stderr, stopped when the server ends.
            let mut shell = Told {
                rt: runtime,
                stop: cancel.clone(),
                opts,
                say: |line: String| eprintln!("trainbench: {line}"),
            };
            let mut plan = plan;
            let tuned = ws.tune(host, &mut plan, &command, &mut shell)?;
            Ok(crate::tune_cmd::to_json(db, &tuned, &plan))
        }
    }
}
