//! What a session file must meet before the store touches it: bounds on every
//! field, consistent ids, and summaries its own raw windows support.

#[allow(
    clippy::wildcard_imports,
    reason = "the file's types and limits, all of them used here"
)]
use super::*;
use crate::stats::WindowTiming;
use crate::summary::RunSummary;

pub(super) fn invalid(field: impl Into<String>, message: impl Into<String>) -> SessionFileError {
    SessionFileError::Invalid {
        field: field.into(),
        message: message.into(),
    }
}

/// A run's device count, batch, timings and counts, and its raw data's size.
fn check_run_numbers(i: usize, r: &PortableRun) -> Result<(), SessionFileError> {
    let f = |name: &str| format!("runs[{i}].{name}");
    if r.devices == 0 || r.devices > 4096 {
        return Err(invalid(
            f("devices"),
            format!("= {} is not allowed: expected 1 to 4096", r.devices),
        ));
    }
    check_i64(&f("batch_size"), r.batch_size)?;
    for (name, v) in [
        ("flops_per_sample", r.flops_per_sample),
        ("first_step_s", r.first_step_s),
        ("first_step_train_s", r.first_step_train_s),
        ("compile_s", r.compile_s),
    ] {
        if let Some(v) = v {
            check_number(&f(name), v)?;
        }
    }
    if r.epoch_samples == Some(0) {
        return Err(invalid(
            f("epoch_samples"),
            "= 0 is not allowed: expected a whole number ≥ 1".to_owned(),
        ));
    }
    for (name, v) in [
        ("param_count", r.param_count),
        ("train_start_ns", r.train_start_ns),
        ("epoch_samples", r.epoch_samples),
    ] {
        if let Some(v) = v {
            check_i64(&f(name), v)?;
        }
    }
    let rows = r.windows.len() + r.evals.len() + r.memory.len() + r.telemetry.len();
    if rows > MAX_ROWS_PER_RUN {
        return Err(invalid(
            f("windows"),
            format!("the run has {rows} rows of raw data: at most {MAX_ROWS_PER_RUN} allowed"),
        ));
    }
    Ok(())
}

/// Timed windows: indices rising, every number bounded, ends after starts.
fn check_windows(i: usize, r: &PortableRun) -> Result<(), SessionFileError> {
    let mut last_index = None;
    for (j, w) in r.windows.iter().enumerate() {
        let wf = |n: &str| format!("runs[{i}].windows[{j}].{n}");
        if last_index.is_some_and(|l| w.index <= l) {
            return Err(invalid(
                wf("index"),
                format!("= {} repeats or goes backwards", w.index),
            ));
        }
        last_index = Some(w.index);
        for (n, v) in [
            ("index", w.index),
            ("first_step", w.first_step),
            ("steps", w.steps),
            ("samples", w.samples),
            ("start_ns", w.start_ns),
            ("end_ns", w.end_ns),
        ] {
            check_i64(&wf(n), v)?;
        }
        if w.end_ns < w.start_ns {
            return Err(invalid(wf("end_ns"), "is before start_ns"));
        }
        check_number(&wf("loss_mean"), w.loss_mean)?;
        if let Some(lr) = w.lr {
            check_number(&wf("lr"), lr)?;
        }
    }
    Ok(())
}

/// Evaluations: one per step, every number bounded.
fn check_evals(i: usize, r: &PortableRun) -> Result<(), SessionFileError> {
    let mut steps = std::collections::HashSet::new();
    for (j, e) in r.evals.iter().enumerate() {
        let ef = |n: &str| format!("runs[{i}].evals[{j}].{n}");
        if !steps.insert(e.step) {
            return Err(invalid(ef("step"), format!("= {} appears twice", e.step)));
        }
        for (n, v) in [("step", e.step), ("samples", e.samples), ("t_ns", e.t_ns)] {
            check_i64(&ef(n), v)?;
        }
        for (n, v) in [
            ("epoch", e.epoch),
            ("elapsed_s", e.elapsed_s),
            ("accuracy", e.accuracy),
            ("loss", e.loss),
        ] {
            check_number(&ef(n), v)?;
        }
    }
    Ok(())
}

/// Memory peaks: one per device and source.
fn check_memory(i: usize, r: &PortableRun) -> Result<(), SessionFileError> {
    let mut peaks = std::collections::HashSet::new();
    check_run_env(i, r)?;
    for (j, m) in r.memory.iter().enumerate() {
        let mf = |n: &str| format!("runs[{i}].memory[{j}].{n}");
        if !peaks.insert((m.device.as_str(), m.source.as_str())) {
            return Err(invalid(mf("device"), "repeats a device and source"));
        }
        check_i64(&mf("peak_bytes"), m.peak_bytes)?;
        if let Some(v) = m.reserved_peak_bytes {
            check_i64(&mf("reserved_peak_bytes"), v)?;
        }
    }
    Ok(())
}

/// Telemetry: one sample per source and instant, every number bounded.
fn check_telemetry(i: usize, r: &PortableRun) -> Result<(), SessionFileError> {
    let mut samples = std::collections::HashSet::new();
    for (j, t) in r.telemetry.iter().enumerate() {
        let tf = |n: &str| format!("runs[{i}].telemetry[{j}].{n}");
        if !samples.insert((t.source.as_str(), t.t_ns)) {
            return Err(invalid(tf("t_ns"), "repeats a source and instant"));
        }
        check_i64(&tf("t_ns"), t.t_ns)?;
        for (n, v) in [
            ("rss_bytes", t.rss_bytes),
            ("mem_used_bytes", t.mem_used_bytes),
            ("energy_mj", t.energy_mj),
            ("throttle_reasons", t.throttle_reasons),
        ] {
            if let Some(v) = v {
                check_i64(&tf(n), v)?;
            }
        }
        for (n, v) in [
            ("cpu_percent", t.cpu_percent),
            ("host_cpu_percent", t.host_cpu_percent),
            ("util_percent", t.util_percent),
            ("power_w", t.power_w),
        ] {
            if let Some(v) = v {
                check_number(&tf(n), v)?;
            }
        }
    }
    Ok(())
}

/// The run's price: finite, not negative, some devices.
fn check_price(i: usize, r: &PortableRun) -> Result<(), SessionFileError> {
    let f = |name: &str| format!("runs[{i}].{name}");
    if let Some(p) = &r.price {
        check_number(&f("price.usd_per_hour"), p.usd_per_hour)?;
        check_number(&f("price.usd_per_device_hour"), p.usd_per_device_hour)?;
        if p.usd_per_hour < 0.0 || p.usd_per_device_hour < 0.0 || p.devices == 0 {
            return Err(invalid(f("price"), "has a negative price or no devices"));
        }
    }
    Ok(())
}

/// Uids are 32 lower-case hex digits (128 random bits).
pub fn is_uid(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A text field within its bound from [`TEXT_BOUNDS`] (`bound_of` names it
/// there; `field` is the path shown).
pub(super) fn check_bounded(field: &str, bound_of: &str, s: &str) -> Result<(), SessionFileError> {
    let max = text_bound(bound_of);
    if s.len() > max {
        return Err(invalid(
            field,
            format!("is {} bytes long: at most {max} allowed", s.len()),
        ));
    }
    Ok(())
}

/// A JSON value within its bound, as serialised.
fn check_json(field: &str, bound_of: &str, v: &serde_json::Value) -> Result<(), SessionFileError> {
    check_bounded(field, bound_of, &v.to_string())
}

/// Texts shown on one line (host names, ids): no control characters.
pub(super) fn check_line(field: &str, s: &str) -> Result<(), SessionFileError> {
    if s.chars().any(char::is_control) {
        return Err(invalid(
            field,
            format!("= {s:?} is not allowed: expected no control characters"),
        ));
    }
    Ok(())
}

fn check_settings(settings: &SessionSettings) -> Result<(), SessionFileError> {
    let mut seen = std::collections::HashSet::new();
    for c in &settings.charts {
        if !seen.insert(*c) {
            return Err(invalid(
                "session.settings.charts",
                format!("lists {} twice: each chart at most once", c.key()),
            ));
        }
    }
    if settings.hidden_series.len() > MAX_RUNS {
        return Err(invalid(
            "session.settings.hidden_series",
            format!(
                "has {} entries: at most {MAX_RUNS} allowed",
                settings.hidden_series.len()
            ),
        ));
    }
    let mut hidden = std::collections::HashSet::new();
    for (i, h) in settings.hidden_series.iter().enumerate() {
        let field = format!("session.settings.hidden_series[{i}]");
        check_bounded(&field, "session.settings.hidden_series[]", h)?;
        if !hidden.insert(h.as_str()) {
            return Err(invalid(field, "appears twice"));
        }
    }
    Ok(())
}

/// Every text of a run within its bound.
fn check_run_texts(i: usize, r: &PortableRun) -> Result<(), SessionFileError> {
    let texts = [
        ("config_key", Some(&r.config_key)),
        ("model", Some(&r.model)),
        ("price_offering", r.price_offering.as_ref()),
        ("status_reason", r.status_reason.as_ref()),
        ("error_class", r.error_class.as_ref()),
        ("done_reason", r.done_reason.as_ref()),
        ("stderr_tail", r.stderr_tail.as_ref()),
    ];
    for (name, text) in texts {
        if let Some(t) = text {
            check_bounded(&format!("runs[{i}].{name}"), &format!("runs[].{name}"), t)?;
        }
    }
    check_line(&format!("runs[{i}].model"), &r.model)?;
    let values = [
        ("spec", Some(&r.spec)),
        ("hello", r.hello.as_ref()),
        ("provenance", r.provenance.as_ref()),
    ];
    for (name, value) in values {
        if let Some(v) = value {
            check_json(&format!("runs[{i}].{name}"), &format!("runs[].{name}"), v)?;
        }
    }
    for (j, m) in r.memory.iter().enumerate() {
        let mf = |n: &str| format!("runs[{i}].memory[{j}].{n}");
        check_bounded(&mf("device"), "runs[].memory[].device", &m.device)?;
        check_bounded(&mf("source"), "runs[].memory[].source", &m.source)?;
    }
    for (j, t) in r.telemetry.iter().enumerate() {
        let field = format!("runs[{i}].telemetry[{j}].source");
        check_bounded(&field, "runs[].telemetry[].source", &t.source)?;
    }
    Ok(())
}

/// The variables a run's configuration sets, checked as a typed one is
/// (`spec.env`): a file must not bring `LD_PRELOAD` or `NCCL_NET_PLUGIN`
/// into a configuration that may be run again here.
fn check_run_env(i: usize, r: &PortableRun) -> Result<(), SessionFileError> {
    let Some(env) = r.spec.get("env") else {
        return Ok(());
    };
    let field = format!("runs[{i}].spec.env");
    let run = format!("run {} ({} {})", r.id, r.framework.as_str(), r.model);
    let parsed: crate::spec::env::WorkerEnv =
        serde_json::from_value(env.clone()).map_err(|_| {
            invalid(
                &field,
                format!("of {run} is not allowed: expected an object of NAME: \"value\" strings"),
            )
        })?;
    crate::spec::env::check(&parsed)
        .map_err(|e| invalid(field, format!("of {run} is not allowed: {e}")))
}

fn check_number(field: &str, v: f64) -> Result<(), SessionFileError> {
    if !v.is_finite() || !(-1e15..=1e15).contains(&v) {
        return Err(invalid(
            field,
            format!("= {v} is not allowed: expected a finite number within ±1e15"),
        ));
    }
    Ok(())
}

fn check_i64(field: &str, v: u64) -> Result<(), SessionFileError> {
    if i64::try_from(v).is_err() {
        return Err(invalid(
            field,
            format!("= {v} is not allowed: expected at most {}", i64::MAX),
        ));
    }
    Ok(())
}

impl SessionFile {
    /// Parses and validates a session file's bytes.
    pub fn parse(bytes: &[u8]) -> Result<SessionFile, SessionFileError> {
        if bytes.len() > MAX_SESSION_FILE_BYTES {
            return Err(SessionFileError::TooLarge {
                size: bytes.len(),
                max: MAX_SESSION_FILE_BYTES,
            });
        }
        // The header first, so a wrong format or version is named as such
        // rather than as whatever field differs.
        #[derive(Deserialize)]
        struct Header {
            format: Option<serde_json::Value>,
            version: Option<serde_json::Value>,
        }
        let header: Header = serde_json::from_slice(bytes)
            .map_err(|e| SessionFileError::NotASession(format!("not valid JSON ({e})")))?;
        if header.format.as_ref().and_then(|f| f.as_str()) != Some(SESSION_FORMAT) {
            return Err(SessionFileError::NotASession(format!(
                "format = {} (expected \"{SESSION_FORMAT}\")",
                header.format.map_or("missing".into(), |f| f.to_string())
            )));
        }
        match header.version.as_ref().and_then(serde_json::Value::as_u64) {
            Some(v)
                if (u64::from(OLDEST_SESSION_VERSION)..=u64::from(SESSION_VERSION))
                    .contains(&v) => {}
            Some(v) => {
                return Err(SessionFileError::Version {
                    found: v,
                    supported: SESSION_VERSION,
                })
            }
            None => {
                return Err(SessionFileError::NotASession(
                    "version is missing or not a whole number".into(),
                ))
            }
        }
        let de = &mut serde_json::Deserializer::from_slice(bytes);
        let file: SessionFile =
            serde_path_to_error::deserialize(de).map_err(|e| SessionFileError::Malformed {
                path: e.path().to_string(),
                message: e.inner().to_string(),
            })?;
        file.validate()?;
        Ok(file)
    }

    /// Bounds and consistency a file must meet before it is imported.
    pub fn validate(&self) -> Result<(), SessionFileError> {
        check_session_name(&self.session.name)?;
        if !is_uid(&self.session.uid) {
            return Err(invalid(
                "session.uid",
                format!(
                    "= {:?} is not allowed: expected 32 hex digits",
                    self.session.uid
                ),
            ));
        }
        check_settings(&self.session.settings)?;
        check_bounded("exported_by", "exported_by", &self.exported_by)?;
        for (field, text) in [
            ("machine.hostname", &self.machine.hostname),
            ("machine.machine_id", &self.machine.machine_id),
        ] {
            check_bounded(field, field, text)?;
            check_line(field, text)?;
        }
        if self.runs.is_empty() || self.runs.len() > MAX_RUNS {
            return Err(invalid(
                "runs",
                format!("has {} runs: expected 1 to {MAX_RUNS}", self.runs.len()),
            ));
        }
        let mut uids = std::collections::HashSet::new();
        let mut ids = std::collections::HashSet::new();
        for (i, r) in self.runs.iter().enumerate() {
            let f = |name: &str| format!("runs[{i}].{name}");
            if !is_uid(&r.uid) {
                return Err(invalid(
                    f("uid"),
                    format!("= {:?} is not allowed: expected 32 hex digits", r.uid),
                ));
            }
            if !uids.insert(r.uid.as_str()) {
                return Err(invalid(
                    f("uid"),
                    format!("= {} appears twice in the file", r.uid),
                ));
            }
            if !ids.insert(r.id) {
                return Err(invalid(
                    f("id"),
                    format!("= {} appears twice in the file", r.id),
                ));
            }
            check_run_texts(i, r)?;
            if matches!(r.status, RunStatus::Queued | RunStatus::Running) {
                return Err(invalid(
                    f("status"),
                    format!(
                        "= {} is not allowed: only finished runs travel in session files",
                        r.status.as_str()
                    ),
                ));
            }
            check_run_numbers(i, r)?;
            check_windows(i, r)?;
            check_evals(i, r)?;
            check_memory(i, r)?;
            check_telemetry(i, r)?;
            check_price(i, r)?;
            if let Some(s) = &r.summary {
                self.check_summary(i, r, s)?;
            }
        }
        if let Some(b) = &self.session.baseline_run_uid {
            if !uids.contains(b.as_str()) {
                return Err(invalid(
                    "session.baseline_run_uid",
                    format!("= {b} is not one of the file's runs"),
                ));
            }
        }
        self.check_model_files()?;
        self.check_searches()
    }

    /// The runs of the file that trained the model file with `sha256`, as
    /// `run ID (FRAMEWORK MODEL)`, for messages.
    pub fn runs_of_model_file(&self, sha256: &str) -> Vec<String> {
        self.runs
            .iter()
            .filter(|r| r.spec.get("model_sha256").and_then(|v| v.as_str()) == Some(sha256))
            .map(|r| format!("run {} ({} {})", r.id, r.framework.as_str(), r.model))
            .collect()
    }

    /// Model files: only in version 2, each once, bounded, and each the copy
    /// of a file some run of the file trained. That the text hashes to its
    /// SHA-256 is the importer's to check (this crate computes no hashes).
    fn check_model_files(&self) -> Result<(), SessionFileError> {
        if !self.model_files.is_empty() && self.version < 2 {
            return Err(invalid(
                "model_files",
                format!(
                    "is not allowed in a version {} file: expected version 2",
                    self.version
                ),
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for (i, m) in self.model_files.iter().enumerate() {
            let f = |n: &str| format!("model_files[{i}].{n}");
            crate::models::file::check_sha256(Some(&m.sha256))
                .map_err(|e| invalid(f("sha256"), e.to_string()))?;
            if !seen.insert(m.sha256.as_str()) {
                return Err(invalid(
                    f("sha256"),
                    format!("= {} appears twice in the file", m.sha256),
                ));
            }
            check_bounded(&f("reference"), "model_files[].reference", &m.reference)?;
            check_line(&f("reference"), &m.reference)?;
            check_bounded(&f("text"), "model_files[].text", &m.text)?;
            if self.runs_of_model_file(&m.sha256).is_empty() {
                return Err(invalid(
                    f("sha256"),
                    format!(
                        "= {} is not the model_sha256 of any of the file's runs: only the copies of files its runs trained travel",
                        m.sha256
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A summary must agree with the raw windows it summarises: the headline
    /// throughput is recomputed from them, so a file cannot carry a number
    /// its own measurements do not support.
    fn check_summary(
        &self,
        i: usize,
        r: &PortableRun,
        s: &RunSummary,
    ) -> Result<(), SessionFileError> {
        let f = |n: &str| format!("runs[{i}].summary.{n}");
        for (n, v) in [
            ("throughput_samples_per_s", s.throughput_samples_per_s),
            ("time_to_first_step_s", s.time_to_first_step_s),
            ("time_to_accuracy_s", s.time_to_accuracy_s),
            ("epoch_time_s", s.epoch_time_s),
            ("cost_per_epoch_usd", s.cost_per_epoch_usd),
            ("energy_j_per_sample", s.energy_j_per_sample),
            ("mfu", s.mfu),
            ("best_accuracy", s.best_accuracy),
            ("target_accuracy", s.target_accuracy),
        ] {
            if let Some(v) = v {
                check_number(&f(n), v)?;
            }
        }
        if let Some(ci) = s.throughput_ci95 {
            check_number(&f("throughput_ci95.low"), ci.low)?;
            check_number(&f("throughput_ci95.high"), ci.high)?;
        }
        if let Some(b) = s.peak_memory_bytes {
            check_i64(&f("peak_memory_bytes"), b)?;
        }
        let windows: Vec<WindowTiming> = r.windows.iter().map(WindowTiming::from).collect();
        let recomputed = crate::stats::steady_throughput(&windows).map(|t| t.median_samples_per_s);
        let agrees = match (s.throughput_samples_per_s, recomputed) {
            (None, None) => true,
            (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0),
            _ => false,
        };
        if !agrees {
            return Err(invalid(
                f("throughput_samples_per_s"),
                format!(
                    "= {:?} does not match the run's own windows ({:?})",
                    s.throughput_samples_per_s, recomputed
                ),
            ));
        }
        Ok(())
    }
}
