//! "Epoch time and cost": each run's epoch time, how it was found (measured,
//! or projected and for which epoch), its cost per epoch and the price used.

use trainbench_core::record::RunDetail;

use crate::document::Page;

/// Seconds as `12.3 s`, `4.5 min` or `3.2 h`.
fn duration(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.1} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// The table of every run's epoch and cost; projected figures say so.
pub(crate) fn cost(l: &mut impl Page, runs: &[RunDetail]) {
    l.heading("Epoch time and cost", 12.0);
    l.paragraph(
        "An epoch is one pass over the training split of the run's data set. \"Projected\" figures are for an epoch the run did not train \
         through: the epoch's samples at the steady throughput. The basis column says which epoch (see Method).",
        9.0,
        false,
    );
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            let s = r.row.summary.as_ref();
            let projected = s.and_then(|s| s.cost_is_projected) == Some(true)
                || s.and_then(|s| s.epoch_basis.as_deref())
                    .is_some_and(|b| b.starts_with("projected"));
            let mark = if projected { " (projected)" } else { "" };
            vec![
                format!("#{}", r.row.id),
                s.and_then(|s| s.epoch_time_s)
                    .map_or("not measured".into(), |t| format!("{}{mark}", duration(t))),
                s.and_then(|s| s.epoch_basis.clone())
                    .unwrap_or_else(|| "not measured".into()),
                match (s.and_then(|s| s.cost_per_epoch_usd), &r.row.price_offering) {
                    (Some(c), _) => format!("${c:.2}{mark}"),
                    (None, None) => "no price chosen".into(),
                    (None, Some(_)) => "not measured".into(),
                },
                match (
                    &r.row.price_offering,
                    s.and_then(|s| s.price_as_of.as_deref()),
                ) {
                    (Some(o), Some(d)) => format!("{o}, as of {d}"),
                    (Some(o), None) => o.clone(),
                    (None, _) => "—".into(),
                },
            ]
        })
        .collect();
    l.table(
        &["Run", "Epoch time", "Basis", "Cost per epoch", "Price"],
        &[30.0, 70.0, 200.0, 70.0, 130.0],
        &rows,
        7.0,
    );
}
