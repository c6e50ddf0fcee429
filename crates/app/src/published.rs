//! The published record, once for both shells: the reference table with
//! each row's implied MFU and plausibility (`core::published`), and a stored
//! run placed beside it.

use serde::Serialize;
use trainbench_core::published::percent;
use trainbench_core::published::{
    against, implied, judge, published, why_not_placed, Against, Implied, Plausibility, Published,
    RunFigures,
};
use trainbench_core::record::RunDetail;
use trainbench_report::document::Section;

use crate::error::{AppError, AppResult};
use crate::workspace::Workspace;

/// One published result with its implied MFU and verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PublishedRow {
    #[serde(flatten)]
    pub row: Published,
    pub implied: Vec<Implied>,
    pub plausibility: Plausibility,
}

/// Every published row shipped with the studio, judged.
pub fn table() -> Vec<PublishedRow> {
    published()
        .into_iter()
        .map(|row| {
            let implied = implied(&row);
            let plausibility = judge(&row, &implied);
            PublishedRow {
                row,
                implied,
                plausibility,
            }
        })
        .collect()
}

/// A stored run beside the record: the references of its model family,
/// closest first; none for a run without a steady throughput or FLOP count.
pub fn beside_record(d: &RunDetail) -> Vec<Against> {
    let Some(s) = &d.row.summary else {
        return Vec::new();
    };
    let Some(rate) = s.throughput_samples_per_s else {
        return Vec::new();
    };
    let flops = d
        .hello
        .as_ref()
        .and_then(|h| h["flops_per_sample"].as_f64())
        .filter(|f| *f > 0.0);
    let Some(flops) = flops else {
        return Vec::new();
    };
    let software = format!(
        "{} {}",
        d.row.framework.as_str(),
        d.row.measured_on.framework_version.as_deref().unwrap_or("")
    );
    against(&RunFigures {
        model: &d.row.model,
        precision: d.row.precision,
        per_device: rate / f64::from(d.row.devices.max(1)),
        flops_per_sample: flops,
        gpu: d.row.measured_on.gpu.as_deref(),
        global_batch: s.global_batch,
        software: software.trim(),
    })
}

/// A run beside the published record, or why it is not placed there.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RecordPlacement {
    /// The published results of its model family, closest first; empty
    /// when it is not placed (or its family has none).
    pub against: Vec<Against>,
    /// Why it is not placed: it trained on the CPU, or its model is far
    /// smaller than every published model of its family. `null` when it is
    /// placed, and when a person asked for it anyway.
    pub not_placed: Option<String>,
}

/// [`beside_record`] where the comparison means something (a GPU run of a
/// model near the published sizes of its family) or `asked` says place it
/// anyway; else why not (`core::published::why_not_placed`).
pub fn placement(d: &RunDetail, asked: bool) -> RecordPlacement {
    let why = (!asked)
        .then(|| {
            why_not_placed(
                &d.row.model,
                d.row.param_count,
                d.row.measured_on.gpu.as_deref(),
            )
        })
        .flatten();
    match why {
        Some(why) => RecordPlacement {
            against: Vec::new(),
            not_placed: Some(why),
        },
        None => RecordPlacement {
            against: beside_record(d),
            not_placed: None,
        },
    }
}

/// Runs set beside the published record together (a comparison, a report).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PlacedRuns {
    /// Each placed run's id with its closest published result, in the runs' order.
    pub closest: Vec<(i64, Against)>,
    /// Why the other runs are not placed, each reason once.
    pub not_placed: Vec<String>,
}

/// Each of `runs` placed as [`placement`] decides.
pub fn placed_runs(runs: &[RunDetail], asked: bool) -> PlacedRuns {
    let mut placed = PlacedRuns {
        closest: Vec::new(),
        not_placed: Vec::new(),
    };
    for d in runs {
        let p = placement(d, asked);
        if let Some(a) = p.against.into_iter().next() {
            placed.closest.push((d.row.id, a));
        }
        if let Some(why) = p.not_placed.filter(|w| !placed.not_placed.contains(w)) {
            placed.not_placed.push(why);
        }
    }
    placed
}

/// The runs `ids` placed together ([`placed_runs`]), as a comparison of
/// them shows them; a run no longer stored is left out.
pub fn placed_by_id(ws: &Workspace, ids: &[i64], asked: bool) -> AppResult<PlacedRuns> {
    let mut details = Vec::with_capacity(ids.len());
    for &id in ids {
        match ws.run_detail(id) {
            Ok(d) => details.push(d),
            Err(AppError::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(placed_runs(&details, asked))
}

/// The PDF's section placing each compared run beside its closest
/// published result ([`placed_runs`]); where none is placed, a section that
/// says once why; `None` when nothing is to say.
pub fn record_section(runs: &[RunDetail], asked: bool) -> Option<Section> {
    let placed = placed_runs(runs, asked);
    if placed.closest.is_empty() {
        return (!placed.not_placed.is_empty()).then(|| Section {
            heading: "Beside the published record".into(),
            text: format!(
                "Not placed: {}. (`--beside-record` places the runs anyway; `trainbench published` lists the results.)",
                placed.not_placed.join("; ")
            ),
            headers: Vec::new(),
            widths: Vec::new(),
            rows: Vec::new(),
        });
    }
    let rows: Vec<Vec<String>> = placed
        .closest
        .iter()
        .map(|(id, a)| {
            let r = &a.reference;
            vec![
                format!("#{id}"),
                format!(
                    "{} {} on {} ({}, {})",
                    r.framework, r.model, r.hardware, r.source, r.date
                ),
                percent(a.fraction),
                if a.differs.is_empty() {
                    "nothing".into()
                } else {
                    a.differs.join("; ")
                },
            ]
        })
        .collect();
    Some(Section {
        heading: "Beside the published record".into(),
        text: "Each run's achieved FLOP/s per device (steady throughput × the studio's FLOPs per sample) as a share of the closest published result of its model family, counted with the studio's FLOPs of that result's model; every difference is listed. `trainbench published` lists the results with their sources and the MFU each implies.".into(),
        headers: ["Run", "Published result (source, date)", "Share", "Differs"].map(String::from).to_vec(),
        widths: vec![30.0, 215.0, 45.0, 210.0],
        rows,
    })
}
