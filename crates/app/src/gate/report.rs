//! A gate's verdict for continuous integration: a Markdown summary (appended
//! to `$GITHUB_STEP_SUMMARY` when it is set) and a JUnit XML report with one
//! test case: pass → passed; fail → `<failure>`; undecided → `<skipped>`
//! (nothing was shown either way); a side that could not run → `<error>`.

use std::io::Write;
use std::path::Path;

use trainbench_core::gate::{Side, Verdict};

use super::{Ended, Gated};
use crate::error::{AppError, AppResult};
use crate::workspace::Workspace;

/// Text in a Markdown table cell: no line breaks, pipes and markup escaped.
fn cell(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '|' | '\\' | '`' | '*' | '_' | '<' | '>' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text in XML (an attribute or text node).
fn xml(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn values(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x:.4}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The Markdown summary of a gate.
pub fn markdown(g: &Gated) -> String {
    let head = match &g.ended {
        Ended::Decided(o) => match o.verdict {
            Verdict::Pass => "✅ pass",
            Verdict::Fail => "❌ fail",
            Verdict::Undecided => "⚠️ undecided",
        },
        Ended::SideFailed { .. } => "🛑 error",
    };
    let mut md = format!(
        "### trainbench gate: {head}\n\n{}\n\n| | |\n|---|---|\n| baseline | {} |\n| candidate | {} |\n| allowed slowdown | {:.1} % |\n",
        cell(&g.message()),
        cell(&g.baseline),
        cell(&g.candidate),
        g.max_slowdown * 100.0
    );
    if let Ended::Decided(o) = &g.ended {
        md.push_str(&format!(
            "| time ratio (candidate ÷ baseline) | {:.4} |\n| 95 % interval | {:.4} – {:.4} |\n| runs | {} baseline, {} candidate (interleaved A B B A) |\n| baseline throughput (samples/s) | {} |\n| candidate throughput (samples/s) | {} |\n",
            o.ratio,
            o.ci95.low,
            o.ci95.high,
            o.baseline_runs,
            o.candidate_runs,
            values(&o.baseline_values),
            values(&o.candidate_values)
        ));
        if let Some(more) = o.more_runs() {
            md.push_str(&format!(
                "| runs that would decide | {more} more per side |\n"
            ));
        }
    }
    md.push_str(&format!(
        "| stored | sweep {} (`trainbench query \"SELECT * FROM q_gates WHERE sweep_id = {}\"`) |\n\n",
        g.sweep_id, g.sweep_id
    ));
    md
}

/// The JUnit XML report of a gate: one test suite, one test case.
pub fn junit(g: &Gated) -> String {
    let (failures, errors, skipped, body) = match &g.ended {
        Ended::Decided(o) => match o.verdict {
            Verdict::Pass => (0, 0, 0, String::new()),
            Verdict::Fail => (
                1,
                0,
                0,
                format!(
                    "      <failure message=\"{}\" type=\"slowdown\"/>\n",
                    xml(&o.text)
                ),
            ),
            Verdict::Undecided => (
                0,
                0,
                1,
                format!("      <skipped message=\"{}\"/>\n", xml(&o.text)),
            ),
        },
        Ended::SideFailed { side, .. } => (
            0,
            1,
            0,
            format!(
                "      <error message=\"{}\" type=\"{}_failed\"/>\n",
                xml(&g.message()),
                side.key()
            ),
        ),
    };
    let runs = |s: Side| g.runs.iter().filter(|r| r.0 == s).count();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"trainbench gate\" tests=\"1\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">\n  <testsuite name=\"trainbench gate\" tests=\"1\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">\n    <properties>\n      <property name=\"baseline\" value=\"{}\"/>\n      <property name=\"candidate\" value=\"{}\"/>\n      <property name=\"max_slowdown\" value=\"{}\"/>\n      <property name=\"verdict\" value=\"{}\"/>\n      <property name=\"sweep_id\" value=\"{}\"/>\n    </properties>\n    <testcase classname=\"trainbench.gate\" name=\"{} not slower than {:.1} % than {}\">\n{body}      <system-out>{} ({} baseline runs, {} candidate runs)</system-out>\n    </testcase>\n  </testsuite>\n</testsuites>\n",
        xml(&g.baseline),
        xml(&g.candidate),
        g.max_slowdown,
        g.verdict_key(),
        g.sweep_id,
        xml(&g.candidate),
        g.max_slowdown * 100.0,
        xml(&g.baseline),
        xml(&g.message()),
        runs(Side::Baseline),
        runs(Side::Candidate),
    )
}

impl Workspace {
    /// Appends the gate's Markdown summary to `path` (GitHub's
    /// `$GITHUB_STEP_SUMMARY`: other steps write to it too).
    pub fn append_gate_summary(&self, path: &Path, g: &Gated) -> AppResult<()> {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(markdown(g).as_bytes()).map(|()| f));
        match &mut f {
            Ok(file) => file.flush().map_err(|e| write_error(path, &e)),
            Err(e) => Err(write_error(path, e)),
        }
    }

    /// Writes the gate's JUnit XML report to `path` (whole or not at all).
    pub fn write_gate_junit(&self, path: &Path, g: &Gated) -> AppResult<String> {
        Ok(self.write_export(path, junit(g).as_bytes())?.path)
    }
}

fn write_error(path: &Path, e: &std::io::Error) -> AppError {
    AppError::bad(
        "github_step_summary",
        format!(
            "github_step_summary = {} is not allowed: expected a file the gate can append to ({e})",
            path.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use trainbench_core::gate::{Gate, Rule, Step};

    fn gated(candidate: f64) -> Gated {
        let mut gate = Gate::new(Rule::new(0.03, 2, 4).unwrap());
        let mut runs = Vec::new();
        let outcome = loop {
            match gate.next() {
                Step::Done(o) => break o,
                Step::Pair(k) => {
                    for (i, s) in trainbench_core::gate::pair_order(k).into_iter().enumerate() {
                        let level = if s == Side::Baseline {
                            100.0
                        } else {
                            candidate
                        };
                        gate.record(s, level * (1.0 + 0.001 * i as f64));
                        runs.push((s, runs.len() as i64 + 1));
                    }
                }
            }
        };
        Gated {
            sweep_id: 7,
            baseline: "script a|b.py".into(),
            candidate: "script <b>&.py".into(),
            max_slowdown: 0.03,
            ended: Ended::Decided(outcome),
            runs,
        }
    }

    #[test]
    fn the_summary_escapes_what_a_person_named_and_says_the_verdict() {
        let md = markdown(&gated(90.0));
        assert!(md.starts_with("### trainbench gate: ❌ fail"), "{md}");
        assert!(
            md.contains("script a\\|b.py") && md.contains("\\<b\\>"),
            "{md}"
        );
        assert!(md.contains("95 % interval"), "{md}");
    }

    #[test]
    fn junit_maps_each_ending_to_one_test_case() {
        let pass = junit(&gated(100.0));
        assert!(
            pass.contains("failures=\"0\" errors=\"0\" skipped=\"0\""),
            "{pass}"
        );
        assert!(!pass.contains("<failure"));
        let fail = junit(&gated(90.0));
        assert!(fail.contains("<failure message=\"fail: slower"), "{fail}");
        assert!(fail.contains("script &lt;b&gt;&amp;.py"), "{fail}");
        let mut error = gated(100.0);
        error.ended = Ended::SideFailed {
            side: Side::Candidate,
            run_id: 4,
            reason: "ValueError \"x\"".into(),
        };
        let mut undecided = gated(100.0);
        if let Ended::Decided(o) = &mut undecided.ended {
            o.verdict = Verdict::Undecided;
            o.text = "undecided: about 4 more runs each".into();
        }
        let undecided = junit(&undecided);
        assert!(
            undecided.contains("skipped=\"1\"")
                && undecided.contains("<skipped message=\"undecided"),
            "{undecided}"
        );
        let error = junit(&error);
        assert!(
            error.contains("errors=\"1\"") && error.contains("<error message=\"candidate: run 4"),
            "{error}"
        );
        assert!(error.contains("&quot;x&quot;"), "{error}");
    }
}
