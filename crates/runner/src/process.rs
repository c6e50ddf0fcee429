//! The worker process of a run: started in its own process group, its
//! stdout read line by line (events, protocol errors, log text) and its
//! stderr into a bounded tail, its process tree and GPUs sampled.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::io::BufReader;
use tokio::process::Command;
use tokio::sync::mpsc;
use trainbench_core::protocol::Event;
use trainbench_probe::{GpuProbe, HostSampler};
use trainbench_store::TelemetrySample;

use crate::{lines, trainbench_core_clock, Line, Progress, WorkerCommand};

/// One telemetry sample of the worker's process tree and of the GPUs (the
/// worker's memory on each kept as a peak); the resident memory and the
/// limit when the sample is over it.
pub(crate) fn sample_once(
    host: &mut HostSampler,
    gpu: &GpuProbe,
    memory_limit_bytes: Option<u64>,
    samples: &mut Vec<TelemetrySample>,
    nvml_peaks: &mut BTreeMap<u32, u64>,
) -> Option<(u64, u64)> {
    let t_ns = trainbench_core_clock();
    let sample = host.sample(t_ns);
    let over = match (memory_limit_bytes, sample.rss_bytes) {
        (Some(limit), Some(rss)) if rss > limit => Some((rss, limit)),
        _ => None,
    };
    samples.push(sample);
    if over.is_some() {
        return over;
    }
    let on_gpus = gpu.sample(t_ns, host.pids());
    samples.extend(on_gpus.samples);
    for (index, bytes) in on_gpus.worker_memory {
        let peak = nvml_peaks.entry(index).or_insert(0);
        *peak = (*peak).max(bytes);
    }
    None
}

/// Starts the worker in its own process group: a terminal's Ctrl-C reaches
/// the studio, which cancels the run and records it, instead of killing the
/// worker first. `settings` (the run's environment variables, checked by
/// the spec: `spec::env`) go on the process directly, after the worker's own.
pub(crate) fn spawn(
    worker: &WorkerCommand,
    settings: &trainbench_core::spec::env::WorkerEnv,
) -> std::io::Result<tokio::process::Child> {
    Command::new(&worker.program)
        .args(&worker.args)
        .envs(worker.env.iter().map(|(k, v)| (k, v)))
        .envs(settings)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0)
        .spawn()
}

pub(crate) fn push_tail(tail: &Arc<Mutex<lines::Tail>>, line: String) {
    if let Ok(mut t) = tail.lock() {
        t.push(line);
    }
}

/// Reads the worker's stderr into the bounded tail and its stdout, line by
/// line, into the returned channel (then `StdoutClosed`).
pub(crate) fn read_output(
    child: &mut tokio::process::Child,
    tail: &Arc<Mutex<lines::Tail>>,
) -> mpsc::Receiver<Line> {
    if let Some(stderr) = child.stderr.take() {
        let tail = tail.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr);
            while let Ok(Some(line)) = lines::read_capped(&mut reader, lines::MAX_LINE_BYTES).await
            {
                push_tail(&tail, line.text());
            }
        });
    }
    let (tx, rx) = mpsc::channel::<Line>(4096);
    if let Some(stdout) = child.stdout.take() {
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            // Bytes, not str: a worker printing invalid UTF-8 is log text too;
            // a line over the cap is cut with a marker and the run goes on.
            while let Ok(Some(line)) = lines::read_capped(&mut reader, lines::MAX_LINE_BYTES).await
            {
                if tx.send(Line::Stdout(line.text())).await.is_err() {
                    return;
                }
            }
            let _ = tx.send(Line::StdoutClosed).await;
        });
    }
    rx
}

/// One line the worker printed: an event (progress, kept for the store), a
/// malformed event (a protocol error in the log) or log text. The event,
/// when it was one.
pub(crate) fn on_stdout_line<'a>(
    text: &str,
    run_id: i64,
    progress: &mut dyn Progress,
    tail: &Arc<Mutex<lines::Tail>>,
    terminal: &mut Option<Event>,
    events: &'a mut Vec<Event>,
) -> Option<&'a Event> {
    match Event::parse_line(text) {
        Some(e) => {
            progress.event(run_id, &e);
            if e.is_terminal() {
                *terminal = Some(e.clone());
            }
            events.push(e);
            events.last()
        }
        None => {
            match Event::malformed(text) {
                Some(why) => {
                    let line = format!("[protocol error] {why}: {text}");
                    progress.log(run_id, &line);
                    push_tail(tail, line);
                }
                None => {
                    progress.log(run_id, text);
                    push_tail(tail, format!("[stdout] {text}"));
                }
            }
            None
        }
    }
}
