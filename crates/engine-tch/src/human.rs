//! `quick`: a built-in run printed for a person instead of as protocol lines.

use std::process::ExitCode;

use trainbench_core::breakdown::{breakdown, fmt_s};
use trainbench_core::protocol::Event;
use trainbench_core::spec::RunSpec;
use trainbench_core::stats::{steady_throughput, WindowTiming};

use crate::error::{guarded, WorkerError};
use crate::train::{self, Sink};

const TARGET: f64 = 0.95;

fn thousands(n: f64) -> String {
    let s = format!("{:.0}", n.round());
    let (sign, digits) = s
        .strip_prefix('-')
        .map(|d| ("-", d))
        .unwrap_or(("", s.as_str()));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1024.0 * 1024.0))
}

#[derive(Default)]
struct Report {
    total_steps: u64,
    windows: Vec<WindowTiming>,
    first_step_s: Option<f64>,
    evals: Vec<(u64, f64, f64)>,
    memory: Vec<(String, String, u64)>,
    done: Option<(u64, String)>,
    breakdown: Option<trainbench_core::protocol::StepTimings>,
    global_batch: u64,
}

impl Sink for Report {
    fn emit(&mut self, event: &Event) {
        match event {
            Event::Hello {
                framework_version,
                device,
                threads,
                model,
                param_count,
                flops_per_sample,
                precision,
                precision_in_effect,
                data,
                batch_size,
                total_steps,
                ..
            } => {
                self.total_steps = *total_steps;
                self.global_batch = *batch_size;
                println!("TrainBench quick run: libtorch {framework_version} (tch 0.26) on {}{}, {threads} thread(s)",
                    device.id, device.name.as_deref().map(|n| format!(" ({n})")).unwrap_or_default());
                println!("model {model}: {} parameters, {:.3} GFLOPs per training sample; precision {precision} ({precision_in_effect})",
                    thousands(param_count.unwrap_or(0) as f64), flops_per_sample.unwrap_or(0.0) / 1e9);
                println!("data: {} ({} training / {} held-out samples){}; batch {batch_size}, {total_steps} steps",
                    data.source, thousands(data.train_samples as f64), thousands(data.eval_samples as f64),
                    data.path.as_deref().map(|p| format!(" from {p}")).unwrap_or_default());
            }
            Event::FirstStep {
                since_process_start_s,
                since_train_start_s,
                ..
            } => {
                self.first_step_s = *since_process_start_s;
                match since_process_start_s {
                    Some(s) => println!("first step finished {s:.2} s after the process started ({since_train_start_s:.2} s after training set-up)"),
                    None => println!("first step finished {since_train_start_s:.2} s after training set-up (process start time not readable)"),
                }
            }
            Event::Window {
                first_step,
                loss_mean,
                ..
            } => {
                if let (Some(w), Some(last)) = (event.window_timing(), event.steps_finished()) {
                    self.windows.push(w);
                    println!(
                        "  steps {first_step:>4}–{last:<4} of {}  loss {loss_mean:.4}  {:>8} samples/s",
                        self.total_steps,
                        thousands(w.throughput())
                    );
                }
            }
            Event::Eval {
                step,
                epoch,
                elapsed_s,
                accuracy,
                loss,
                ..
            } => {
                self.evals.push((*step, *elapsed_s, *accuracy));
                println!("  evaluation at step {step} (epoch {epoch:.1}): accuracy {:.2} %, loss {:.4}, {elapsed_s:.1} s into training", accuracy * 100.0, loss.unwrap_or(f64::NAN));
            }
            Event::Memory {
                device,
                source,
                peak_bytes,
                ..
            } => self
                .memory
                .push((device.clone(), source.clone(), *peak_bytes)),
            Event::Done { steps, reason, .. } => self.done = Some((*steps, reason.clone())),
            Event::Breakdown(t) => self.breakdown = Some(t.clone()),
            // The libtorch worker measures no operator profile.
            Event::Error { .. } | Event::Profile(_) => {}
        }
    }
}

impl Report {
    fn print_summary(&self) {
        println!();
        println!("Measured");
        match steady_throughput(&self.windows) {
            Some(s) => {
                let ci = s
                    .ci95
                    .map(|c| format!("95 % CI {}–{}", thousands(c.low), thousands(c.high)))
                    .unwrap_or_else(|| "CI not measured: fewer than 6 steady windows".into());
                println!("  steady throughput   {} samples/s (median of {} windows; {} warm-up window(s) excluded; {ci})",
                    thousands(s.median_samples_per_s), s.windows_total - s.windows_warmup, s.windows_warmup);
            }
            None => println!("  steady throughput   not measured (no timed windows)"),
        }
        match self.first_step_s {
            Some(s) if s.is_finite() => {
                println!("  time to first step  {s:.2} s from process start")
            }
            _ => println!("  time to first step  not measured"),
        }
        for (device, source, bytes) in &self.memory {
            let what = match source.as_str() {
                "allocator" => "framework allocator peak",
                "process_rss" => "process peak RSS (VmHWM)",
                other => other,
            };
            println!("  peak memory         {} on {device}: {what}", mib(*bytes));
        }
        let steady = steady_throughput(&self.windows).map(|s| s.median_samples_per_s);
        match self
            .breakdown
            .as_ref()
            .and_then(|t| breakdown(t, self.global_batch, steady))
        {
            Some(b) => {
                let parts: Vec<String> = b
                    .parts
                    .iter()
                    .map(|p| format!("{} {}", p.part.as_str(), fmt_s(p.mean_s)))
                    .collect();
                println!(
                    "  step breakdown      {} per step (means of {} steps; parts sum {}, whole step {})",
                    parts.join(", "),
                    b.steps,
                    fmt_s(b.parts_sum_s),
                    fmt_s(b.whole_step_s)
                );
            }
            None => println!("  step breakdown      not measured"),
        }
        match self.evals.last() {
            Some((step, _, acc)) => println!(
                "  final accuracy      {:.2} % (held-out split, step {step})",
                acc * 100.0
            ),
            None => println!("  final accuracy      not measured"),
        }
        match self.evals.iter().find(|(_, _, acc)| *acc >= TARGET) {
            Some((step, elapsed, _)) => println!("  time to {:.0} %        {elapsed:.1} s (first evaluation at or above the target, step {step})", TARGET * 100.0),
            None => println!("  time to {:.0} %        not reached", TARGET * 100.0),
        }
    }
}

pub fn quick(device: Option<String>, epochs: i64) -> ExitCode {
    if device.as_deref().is_none_or(|d| d.starts_with("cuda")) {
        // Without a GPU (or without libtorch's CUDA library) it trains on the CPU.
        let _ = crate::shim::load_cuda();
    }
    let device = device.unwrap_or_else(|| {
        if tch::Cuda::is_available() {
            "cuda".into()
        } else {
            "cpu".into()
        }
    });
    let json = serde_json::json!({
        "model": "resnet_mini", "data": "mnist", "batch_size": 64, "epochs": epochs,
        "device": device, "lr": 2e-3, "target_accuracy": TARGET, "window_steps": 10,
    });
    let mut report = Report::default();
    let result = RunSpec::from_json(&json.to_string())
        .map_err(WorkerError::from)
        .and_then(|spec| guarded(|| train::run(&spec, None, &mut report)));
    match result {
        Ok(()) => {
            report.print_summary();
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("quick run failed ({}): {}", e.class.as_str(), e.message);
            crate::exit_code(e.class)
        }
    }
}
