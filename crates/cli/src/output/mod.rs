//! What the CLI prints: progress (here), tables and run details
//! ([`runs`]), comparisons ([`compare`]), step breakdowns, explanations and
//! operator profiles ([`explain`]).

mod compare;
mod explain;
mod runs;
pub mod stream;
pub mod table;

pub use compare::{compare_report, print_compare};
pub use explain::{print_breakdown, print_explain, print_profile};
pub use runs::{
    print_batch_search, print_groups, print_not_placed, print_prices, print_runs_table,
    print_scaling, print_show, print_vs_record,
};

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Value};
use trainbench_app::live::Figures;
use trainbench_app::prices::PriceEntry;
use trainbench_app::Progress;
use trainbench_core::compare::{config_label, Comparison, Confidence, Metric, MetricValue};
use trainbench_core::protocol::Event;
use trainbench_core::record::{RunDetail, RunRow};
use trainbench_core::summary::RunStatus;
use trainbench_core::text::escape_controls;

/// Progress of one run: a bar on a terminal, plain lines (at most every 2 s)
/// otherwise. Both go to stderr; stdout is for results.
pub struct Bar {
    bar: Option<ProgressBar>,
    label: String,
    /// Steps and throughput, counted as the desktop app counts them.
    figures: Figures,
    last_line: Option<Instant>,
    started: Instant,
}

impl Bar {
    pub fn new(interactive: bool, label: String) -> Bar {
        let bar = interactive.then(|| {
            let b = ProgressBar::new(1);
            let style = ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} steps {msg} ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            b.set_style(style);
            b.set_prefix(label.clone());
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        if bar.is_none() {
            eprintln!("{label}: starting");
        }
        Bar {
            bar,
            label,
            figures: Figures::default(),
            last_line: None,
            started: Instant::now(),
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }

    fn line(&mut self, text: String, force: bool) {
        match &self.bar {
            Some(b) => b.set_message(text),
            None => {
                if force
                    || self
                        .last_line
                        .is_none_or(|t| t.elapsed() >= Duration::from_secs(2))
                {
                    eprintln!("{}: {text}", self.label);
                    self.last_line = Some(Instant::now());
                }
            }
        }
    }
}

impl Progress for Bar {
    /// The studio's own notes (a busy or full database, a remote host's
    /// connection, Slurm's queue); the worker's log text stays in the run.
    fn log(&mut self, _run_id: i64, line: &str) {
        if ["[studio]", "[remote]", "[slurm]", "[ray]", "[journal]"]
            .iter()
            .any(|p| line.starts_with(p))
        {
            let text = format!("{}: {}", self.label, escape_controls(line));
            match &self.bar {
                Some(b) => b.println(text),
                None => eprintln!("{text}"),
            }
        }
    }

    fn event(&mut self, _run_id: i64, event: &Event) {
        self.figures.observe(event);
        match event {
            Event::Hello {
                total_steps,
                param_count,
                device,
                ..
            } => {
                if let Some(b) = &self.bar {
                    // A script that runs as long as it runs has no total.
                    if *total_steps > 0 {
                        b.set_length(*total_steps);
                    }
                }
                let params = param_count.map_or_else(
                    || {
                        "parameters not counted (the script did not call trainbench.model)"
                            .to_owned()
                    },
                    |n| format!("{n} parameters"),
                );
                self.line(format!("{params} on {}", device.id), true);
            }
            Event::FirstStep {
                since_process_start_s,
                ..
            } => {
                let t = since_process_start_s.map_or("?".into(), |s| format!("{s:.2} s"));
                self.line(format!("first step after {t}"), true);
            }
            Event::Window { loss_mean, .. } => {
                let (step, total) = (self.figures.step, self.figures.total_steps.unwrap_or(0));
                if let Some(b) = &self.bar {
                    b.set_position(step);
                }
                let tp = self.figures.current_samples_per_s.unwrap_or(f64::NAN);
                let elapsed = self.started.elapsed().as_secs_f64();
                let eta = match self.figures.steps_left() {
                    Some(left) if step > 0 => elapsed / step as f64 * left as f64,
                    _ => f64::NAN,
                };
                self.line(
                    format!(
                        "step {step}/{total}  {tp:.1} samples/s  loss {loss_mean:.4}  ETA {eta:.0} s"
                    ),
                    false,
                );
            }
            Event::Eval { step, accuracy, .. } => self.line(
                format!(
                    "evaluation at step {step}: accuracy {:.2} %",
                    accuracy * 100.0
                ),
                true,
            ),
            Event::Done { reason, .. } => {
                self.line(format!("done ({})", escape_controls(reason)), true)
            }
            Event::Error { class, message, .. } => self.line(
                format!("error ({}): {}", class.as_str(), escape_controls(message)),
                true,
            ),
            Event::Breakdown(t) => self.line(
                format!(
                    "step breakdown: {} extra steps timed after the windows",
                    t.whole_step_s.len()
                ),
                true,
            ),
            Event::Profile(p) => self.line(
                match &p.not_measured {
                    Some(why) => format!("operator profile: not measured: {why}"),
                    None => format!("operator profile: {} steps under {}", p.steps, p.tool),
                },
                true,
            ),
            Event::Memory { .. } => {}
        }
    }
}

/// A run as one flat JSON object: its row, with the summary's fields at the top
/// level (`status`, `throughput_samples_per_s`, `throughput_ci95`, …).
pub fn run_json(r: &RunRow) -> Value {
    let mut v = json!({
        "id": r.id, "sweep_id": r.sweep_id, "repeat_index": r.repeat_index, "framework": r.framework,
        "model": r.model, "precision": r.precision, "device": r.device, "devices": r.devices,
        "batch_size": r.batch_size, "data": r.data, "status": r.status, "status_reason": r.status_reason,
        "error_class": r.error_class, "exit_code": r.exit_code, "created_unix_ms": r.created_unix_ms,
        "started_unix_ms": r.started_unix_ms, "ended_unix_ms": r.ended_unix_ms,
        "param_count": r.param_count, "price_offering": r.price_offering,
        "configuration": config_label(r), "env": r.env,
    });
    let summary = r
        .summary
        .as_ref()
        .and_then(|s| serde_json::to_value(s).ok());
    if let (Some(obj), Some(Value::Object(fields))) = (v.as_object_mut(), summary) {
        for (k, val) in fields {
            if !(k == "param_count" && val.is_null()) {
                obj.insert(k, val);
            }
        }
    }
    v
}

pub(crate) fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("not measured".into(), |x| format!("{x:.digits$}"))
}

/// Seconds with their unit, and hours or minutes beside long ones.
pub(crate) fn duration_text(t: f64) -> String {
    if t >= 7200.0 {
        format!("{t:.1} s ({:.1} h)", t / 3600.0)
    } else if t >= 120.0 {
        format!("{t:.1} s ({:.1} min)", t / 60.0)
    } else {
        format!("{t:.1} s")
    }
}

pub(crate) fn mib(b: Option<u64>) -> String {
    b.map_or("not measured".into(), bytes)
}

/// Bytes in MiB, for a person.
pub fn bytes(b: u64) -> String {
    format!("{:.0} MiB", b as f64 / 1048576.0)
}

pub fn throughput_text(r: &RunRow) -> String {
    match r.summary.as_ref().and_then(|s| s.throughput_samples_per_s) {
        None => "not measured".into(),
        Some(t) => match r.summary.as_ref().and_then(|s| s.throughput_ci95) {
            Some(ci) => format!("{t:.1} [{:.1}, {:.1}]", ci.low, ci.high),
            None => format!("{t:.1} (CI not measured)"),
        },
    }
}

pub(crate) fn tta_text(r: &RunRow) -> String {
    match r.summary.as_ref() {
        Some(s) => match (s.target_accuracy, s.time_to_accuracy_s, s.target_reached) {
            (Some(t), Some(x), _) => format!("{:.0} % in {x:.1} s", t * 100.0),
            (Some(t), None, Some(false)) => match s.best_accuracy {
                Some(b) => format!("{:.0} % not reached; best {:.1} %", t * 100.0, b * 100.0),
                None => format!("{:.0} % not reached", t * 100.0),
            },
            _ => match (s.target_loss, s.time_to_loss_s, s.target_reached) {
                (Some(t), Some(x), _) => format!("loss ≤ {t} in {x:.1} s"),
                (Some(t), None, Some(false)) => match s.best_loss {
                    Some(b) => format!("loss ≤ {t} not reached; best {b:.4}"),
                    None => format!("loss ≤ {t} not reached"),
                },
                _ => "—".into(),
            },
        },
        None => "—".into(),
    }
}

/// Decimals that show a dollar amount to two significant digits, never
/// fewer than cents: 2 for $3.69 or $0.40, 3 for $0.040, 4 for $0.0040.
pub(crate) fn cost_digits(usd: f64) -> usize {
    let usd = usd.abs();
    if !usd.is_finite() || usd == 0.0 || usd >= 0.1 {
        return 2;
    }
    // 0.004 → log10 −2.4 → 4 decimals.
    let first = (-usd.log10().floor()) as usize;
    (first + 1).clamp(2, 12)
}

/// A dollar amount with [`cost_digits`] decimals: "$0.0040", "$3.69".
pub(crate) fn usd(c: f64) -> String {
    let d = cost_digits(c);
    format!("${c:.d$}")
}

pub(crate) fn cost_text(r: &RunRow) -> String {
    match r.summary.as_ref() {
        Some(s) => match (s.cost_per_epoch_usd, s.cost_is_projected) {
            (Some(c), Some(true)) => format!("{} projected", usd(c)),
            (Some(c), _) => usd(c),
            _ if r.price_offering.is_none() => "no price chosen".into(),
            _ => "not measured".into(),
        },
        None => "not measured".into(),
    }
}

#[cfg(test)]
mod cost_tests {
    use super::usd;

    #[test]
    fn small_costs_keep_two_significant_digits() {
        assert_eq!(usd(0.004), "$0.0040");
        assert_eq!(usd(0.0437), "$0.044");
        assert_eq!(usd(0.4), "$0.40");
        assert_eq!(usd(3.694), "$3.69");
        assert_eq!(usd(1234.5), "$1234.50");
        assert_eq!(usd(0.0), "$0.00");
    }
}
