//! How values read in the report: dates, entry letters, metric cells, and
//! text from a run's JSON records.

use trainbench_core::compare::{Metric, MetricValue};

/// `YYYY-MM-DD HH:MM UTC` from Unix milliseconds.
pub fn utc_text(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil from days (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// A, B, …, Z, AA, AB, …: short names for the entries in tables.
pub fn letter(i: usize) -> String {
    let mut n = i + 1;
    let mut s = Vec::new();
    while n > 0 {
        let r = (n - 1) % 26;
        s.push(b'A' + r as u8);
        n = (n - 1) / 26;
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

/// A metric's value with its 95 % interval and note, or why it is missing.
pub(super) fn value_cell(m: Metric, v: &MetricValue) -> String {
    let digits = match m {
        Metric::CostPerEpoch => 2,
        Metric::PeakMemory => 0,
        _ => 1,
    };
    match v.value {
        None => v.note.clone().unwrap_or_else(|| "not measured".into()),
        Some(x) => {
            let mut s = format!("{x:.digits$}");
            if let Some(ci) = v.ci95 {
                s.push_str(&format!(" [{:.digits$}, {:.digits$}]", ci.low, ci.high));
            }
            if let Some(n) = &v.note {
                s.push_str(&format!(" ({n})"));
            }
            s
        }
    }
}

/// The difference from the baseline, in percent ("baseline" for the baseline
/// itself).
pub(super) fn delta_cell(v: &MetricValue, is_base: bool) -> String {
    if is_base {
        return "baseline".into();
    }
    v.delta_vs_baseline
        .map_or("—".into(), |d| format!("{:+.1} %", d * 100.0))
}

/// The JSON value at `path` in a record, if the record has one.
pub(super) fn str_at<'a>(
    v: &'a Option<serde_json::Value>,
    path: &[&str],
) -> Option<&'a serde_json::Value> {
    let mut cur = v.as_ref()?;
    for p in path {
        cur = cur.get(p)?;
    }
    Some(cur)
}

/// A JSON value as text; "not recorded" when absent or null.
pub(super) fn text_of(v: Option<&serde_json::Value>) -> String {
    match v {
        None | Some(serde_json::Value::Null) => "not recorded".into(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}
