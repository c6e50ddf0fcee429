//! CSV exports (RFC 4180: comma separated, CRLF line ends, fields quoted when
//! they hold a comma, quote or line break). Column sets and units are listed
//! in `docs/reports.md`; an empty cell means *not measured*.
//!
//! Text that a spreadsheet would run as a formula — a field starting with `=`,
//! `+`, `-`, `@`, a tab or a carriage return — is written with a leading `'`
//! so it stays text. Numbers are written as numbers and never altered.

use std::io::Write;

use trainbench_core::record::{RunDetail, RunRow};
use trainbench_core::stats::warmup_windows;
use trainbench_core::telemetry::TelemetrySample;

use crate::ReportError;

/// A text cell made safe for spreadsheets.
pub fn text_cell(s: &str) -> String {
    match s.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{s}"),
        _ => s.to_string(),
    }
}

fn opt_text(s: Option<&str>) -> String {
    s.map(text_cell).unwrap_or_default()
}

fn num<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn float(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map(|x| x.to_string())
        .unwrap_or_default()
}

fn writer<W: Write>(out: W) -> ::csv::Writer<W> {
    ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::CRLF)
        .quote_style(::csv::QuoteStyle::Necessary)
        .from_writer(out)
}

/// Columns of [`runs`], units in the names.
pub const RUN_COLUMNS: [&str; 44] = [
    "run_id",
    "sweep_id",
    "repeat_index",
    "status",
    "status_reason",
    "error_class",
    "exit_code",
    "framework",
    "model",
    "precision",
    "device",
    "devices",
    "batch_size_per_device",
    "global_batch",
    "data",
    "param_count",
    "created_unix_ms",
    "started_unix_ms",
    "ended_unix_ms",
    "throughput_samples_per_s",
    "throughput_ci95_low_samples_per_s",
    "throughput_ci95_high_samples_per_s",
    "tokens_per_sample",
    "throughput_tokens_per_s",
    "windows_total",
    "windows_warmup",
    "time_to_first_step_s",
    "peak_memory_bytes",
    "peak_memory_source",
    "target_accuracy_fraction",
    "best_accuracy_fraction",
    "time_to_accuracy_s",
    "target_loss",
    "best_loss",
    "time_to_loss_s",
    "target_reached",
    "epoch_time_s",
    "epoch_basis",
    "cost_per_epoch_usd",
    "cost_is_projected",
    "price_offering",
    "energy_j_per_sample",
    "mfu_fraction",
    "imported_from",
];

/// Every run as one row: configuration, status and summary.
pub fn runs<W: Write>(rows: &[RunRow], out: W) -> Result<(), ReportError> {
    let mut csv = RunsCsv::new(out)?;
    for r in rows {
        csv.row(r)?;
    }
    csv.finish()
}

/// The CSV of [`runs`] written a run at a time (the header when made), for
/// a listing of any length.
pub struct RunsCsv<W: Write> {
    w: ::csv::Writer<W>,
}

impl<W: Write> RunsCsv<W> {
    pub fn new(out: W) -> Result<RunsCsv<W>, ReportError> {
        let mut w = writer(out);
        w.write_record(RUN_COLUMNS)?;
        Ok(RunsCsv { w })
    }

    /// One run's row.
    pub fn row(&mut self, r: &RunRow) -> Result<(), ReportError> {
        let s = r.summary.as_ref();
        // A training script sets its own precision and data: the row's are
        // defaults the script never saw, so the cells stay empty.
        let script = r.model.starts_with(trainbench_core::models::script::PREFIX);
        let unless_script = |text: &str| {
            if script {
                String::new()
            } else {
                text_cell(text)
            }
        };
        let record: [String; 44] = [
            r.id.to_string(),
            num(r.sweep_id),
            r.repeat_index.to_string(),
            r.status.as_str().to_string(),
            opt_text(r.status_reason.as_deref()),
            opt_text(r.error_class.as_deref()),
            num(r.exit_code),
            text_cell(r.framework.as_str()),
            text_cell(&r.model),
            unless_script(r.precision.as_str()),
            text_cell(&r.device.to_string()),
            r.devices.to_string(),
            r.batch_size.to_string(),
            (r.batch_size * u64::from(r.devices)).to_string(),
            unless_script(r.data.as_str()),
            num(r.param_count),
            r.created_unix_ms.to_string(),
            num(r.started_unix_ms),
            num(r.ended_unix_ms),
            float(s.and_then(|s| s.throughput_samples_per_s)),
            float(s.and_then(|s| s.throughput_ci95).map(|c| c.low)),
            float(s.and_then(|s| s.throughput_ci95).map(|c| c.high)),
            num(s.and_then(|s| s.tokens_per_sample)),
            float(s.and_then(|s| s.tokens_per_s)),
            num(s.map(|s| s.windows_total)),
            num(s.map(|s| s.windows_warmup)),
            float(s.and_then(|s| s.time_to_first_step_s)),
            num(s.and_then(|s| s.peak_memory_bytes)),
            opt_text(s.and_then(|s| s.peak_memory_source.as_deref())),
            float(s.and_then(|s| s.target_accuracy)),
            float(s.and_then(|s| s.best_accuracy)),
            float(s.and_then(|s| s.time_to_accuracy_s)),
            float(s.and_then(|s| s.target_loss)),
            float(s.and_then(|s| s.best_loss)),
            float(s.and_then(|s| s.time_to_loss_s)),
            num(s.and_then(|s| s.target_reached)),
            float(s.and_then(|s| s.epoch_time_s)),
            opt_text(s.and_then(|s| s.epoch_basis.as_deref())),
            float(s.and_then(|s| s.cost_per_epoch_usd)),
            num(s.and_then(|s| s.cost_is_projected)),
            opt_text(r.price_offering.as_deref()),
            float(s.and_then(|s| s.energy_j_per_sample)),
            float(s.and_then(|s| s.mfu)),
            opt_text(r.origin.as_ref().map(|o| o.hostname.as_str())),
        ];
        self.w.write_record(&record)?;
        Ok(())
    }

    /// Writes out what is buffered.
    pub fn finish(mut self) -> Result<(), ReportError> {
        self.w.flush().map_err(::csv::Error::from)?;
        Ok(())
    }
}

/// Raw data of one run that [`raw`] can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Raw {
    Windows,
    Evals,
    Telemetry,
}

impl Raw {
    pub fn parse(s: &str) -> Result<Raw, ReportError> {
        match s {
            "windows" => Ok(Raw::Windows),
            "evals" => Ok(Raw::Evals),
            "telemetry" => Ok(Raw::Telemetry),
            _ => Err(ReportError::Invalid {
                field: "raw",
                value: s.into(),
                allowed: "expected windows, evals or telemetry".into(),
            }),
        }
    }
}

/// A run's timing windows (with throughput and whether the window counted as
/// warm-up), evaluations, or telemetry samples.
pub fn raw<W: Write>(
    run: &RunDetail,
    telemetry: &[TelemetrySample],
    what: Raw,
    out: W,
) -> Result<(), ReportError> {
    let mut w = writer(out);
    let id = run.row.id.to_string();
    match what {
        Raw::Windows => {
            w.write_record([
                "run_id",
                "window_index",
                "first_step",
                "steps",
                "samples",
                "start_ns",
                "end_ns",
                "seconds",
                "throughput_samples_per_s",
                "loss_mean",
                "learning_rate",
                "warmup",
            ])?;
            let timings: Vec<f64> = run
                .windows
                .iter()
                .map(|x| {
                    trainbench_core::stats::WindowTiming {
                        samples: x.samples,
                        start_ns: x.start_ns,
                        end_ns: x.end_ns,
                    }
                    .throughput()
                })
                .collect();
            let warm = warmup_windows(&timings);
            for (i, x) in run.windows.iter().enumerate() {
                let secs = x.end_ns.saturating_sub(x.start_ns) as f64 / 1e9;
                w.write_record([
                    id.clone(),
                    x.index.to_string(),
                    x.first_step.to_string(),
                    x.steps.to_string(),
                    x.samples.to_string(),
                    x.start_ns.to_string(),
                    x.end_ns.to_string(),
                    secs.to_string(),
                    float(Some(timings[i])),
                    float(Some(x.loss_mean)),
                    float(x.lr),
                    (i < warm).to_string(),
                ])?;
            }
        }
        Raw::Evals => {
            w.write_record([
                "run_id",
                "step",
                "epoch",
                "elapsed_s",
                "accuracy_fraction",
                "loss",
            ])?;
            for e in &run.evals {
                w.write_record([
                    id.clone(),
                    e.step.to_string(),
                    float(Some(e.epoch)),
                    float(Some(e.elapsed_s)),
                    float(Some(e.accuracy)),
                    float(e.loss),
                ])?;
            }
        }
        Raw::Telemetry => {
            w.write_record([
                "run_id",
                "t_ns",
                "source",
                "process_cpu_percent_of_one_core",
                "process_rss_bytes",
                "host_cpu_percent_of_one_core",
                "device_memory_used_bytes",
                "device_utilisation_percent",
                "power_w",
                "energy_counter_mj",
                "sm_clock_mhz",
                "memory_clock_mhz",
                "throttle_reasons_bitmask",
            ])?;
            for t in telemetry {
                w.write_record([
                    id.clone(),
                    t.t_ns.to_string(),
                    text_cell(&t.source),
                    float(t.cpu_percent),
                    num(t.rss_bytes),
                    float(t.host_cpu_percent),
                    num(t.mem_used_bytes),
                    float(t.util_percent),
                    float(t.power_w),
                    num(t.energy_mj),
                    num(t.sm_clock_mhz),
                    num(t.mem_clock_mhz),
                    num(t.throttle_reasons),
                ])?;
            }
        }
    }
    w.flush().map_err(::csv::Error::from)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_starts_are_neutralised_and_plain_text_is_not() {
        for s in ["=1+1", "+1", "-2", "@SUM(A1)", "\tx", "\rx"] {
            assert_eq!(text_cell(s), format!("'{s}"));
        }
        for s in ["pytorch", "", "a=b", "1e3"] {
            assert_eq!(text_cell(s), s);
        }
    }
}
