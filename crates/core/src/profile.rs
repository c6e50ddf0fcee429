//! The operator profile's figures: self time per category per sample, and
//! how the gap between two runs splits over the categories (`explain`).

use serde::{Deserialize, Serialize};

use crate::protocol::{OpCategory, OperatorProfile, ProfileTimeline};

/// One row of a profile per sample: a category, or idle (`category: None`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CategoryGap {
    /// `None`: idle (no operator ran on the profile's timeline).
    pub category: Option<OpCategory>,
    pub label: String,
    pub a_per_sample_s: f64,
    pub b_per_sample_s: f64,
    /// B − A.
    pub gap_s: f64,
    /// The row's share of the total gap; `None` when the totals are equal.
    pub share_of_gap: Option<f64>,
}

/// How the gap in time per sample splits over the profile's categories.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProfileGap {
    /// Sum of the rows per sample (categories' self time + idle).
    pub a_per_sample_s: f64,
    pub b_per_sample_s: f64,
    pub gap_s: f64,
    pub rows: Vec<CategoryGap>,
    /// Which timelines the two profiles read, and a warning where they differ.
    pub note: String,
    pub verdict: String,
}

/// A profile per sample, as a run's summary and a comparison entry carry it:
/// seconds per sample of each category (in `OpCategory::ALL` order) and of
/// idle time (last).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProfileSummary {
    pub tool: String,
    pub timeline: Option<ProfileTimeline>,
    /// Profiled steps (summed over the runs averaged).
    pub steps: u64,
    pub rows: Vec<CategoryPerSample>,
}

/// One category's (or idle's) seconds per sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CategoryPerSample {
    /// `None`: idle.
    pub category: Option<OpCategory>,
    pub label: String,
    pub per_sample_s: f64,
}

fn row_labels() -> impl Iterator<Item = (Option<OpCategory>, &'static str)> {
    OpCategory::ALL
        .iter()
        .map(|c| (Some(*c), c.label()))
        .chain([(None, "idle")])
}

impl ProfileSummary {
    /// Seconds per sample, in row order.
    pub fn values(&self) -> Vec<f64> {
        self.rows.iter().map(|r| r.per_sample_s).collect()
    }

    pub fn total_per_sample_s(&self) -> f64 {
        self.rows.iter().map(|r| r.per_sample_s).sum()
    }
}

/// A measured profile per sample (`None` when it was not measured).
pub fn summarize(p: &OperatorProfile, global_batch: u64) -> Option<ProfileSummary> {
    if p.not_measured.is_some() || p.steps == 0 || global_batch == 0 {
        return None;
    }
    let per = (p.steps * global_batch) as f64;
    let values = OpCategory::ALL
        .iter()
        .map(|&c| p.per_step(c).unwrap_or(0.0) / global_batch as f64)
        .chain([p.idle_s / per]);
    Some(ProfileSummary {
        tool: p.tool.clone(),
        timeline: p.timeline,
        steps: p.steps,
        rows: row_labels()
            .zip(values)
            .map(|((category, label), v)| CategoryPerSample {
                category,
                label: label.to_owned(),
                per_sample_s: v,
            })
            .collect(),
    })
}

/// The mean per sample of several runs' profiles (a configuration's repeats).
pub fn average(of: &[&ProfileSummary]) -> Option<ProfileSummary> {
    let first = of.first()?;
    let n = of.len() as f64;
    Some(ProfileSummary {
        tool: first.tool.clone(),
        timeline: first.timeline,
        steps: of.iter().map(|p| p.steps).sum(),
        rows: first
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| CategoryPerSample {
                category: r.category,
                label: r.label.clone(),
                per_sample_s: of
                    .iter()
                    .map(|p| p.rows.get(i).map_or(0.0, |x| x.per_sample_s))
                    .sum::<f64>()
                    / n,
            })
            .collect(),
    })
}

fn timeline_text(t: Option<ProfileTimeline>) -> &'static str {
    match t {
        Some(ProfileTimeline::Device) => "device kernels",
        Some(ProfileTimeline::Host) => "host operators",
        None => "unknown",
    }
}

/// The gap between A's and B's profiles per sample, category by category.
pub fn profile_gap(
    a: &ProfileSummary,
    b: &ProfileSummary,
    a_label: &str,
    b_label: &str,
) -> ProfileGap {
    let (ra, rb) = (a.values(), b.values());
    let ta: f64 = ra.iter().sum();
    let tb: f64 = rb.iter().sum();
    let gap = tb - ta;
    let rows: Vec<CategoryGap> = row_labels()
        .zip(ra.iter().zip(&rb))
        .map(|((category, label), (x, y))| CategoryGap {
            category,
            label: label.to_owned(),
            a_per_sample_s: *x,
            b_per_sample_s: *y,
            gap_s: y - x,
            share_of_gap: (gap.abs() > 0.0).then(|| (y - x) / gap),
        })
        .collect();
    let mut note = format!(
        "A's profile reads {}, B's {}",
        timeline_text(a.timeline),
        timeline_text(b.timeline)
    );
    if a.timeline != b.timeline {
        note.push_str(": different timelines, so the categories are not like for like");
    }
    let verdict = match rows
        .iter()
        .filter(|r| r.gap_s.signum() == gap.signum())
        .max_by(|x, y| x.gap_s.abs().total_cmp(&y.gap_s.abs()))
    {
        Some(r) if gap.abs() > 0.0 => format!(
            "{} takes {} per sample more than {} in the operator profiles; {} accounts for {:.0} % of that",
            if gap > 0.0 { b_label } else { a_label },
            crate::breakdown::fmt_s(gap.abs()),
            if gap > 0.0 { a_label } else { b_label },
            r.label,
            r.share_of_gap.unwrap_or(0.0) * 100.0
        ),
        _ => "the operator profiles show no gap".to_owned(),
    };
    ProfileGap {
        a_per_sample_s: ta,
        b_per_sample_s: tb,
        gap_s: gap,
        rows,
        note,
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{CategoryTime, OtherOps};

    fn profile(matmul: f64, optimizer: f64, idle: f64, steps: u64) -> OperatorProfile {
        OperatorProfile {
            tool: "t".into(),
            not_measured: None,
            steps,
            span_s: matmul + optimizer + idle,
            timeline: Some(ProfileTimeline::Host),
            what: String::new(),
            ops: Vec::new(),
            other_ops: OtherOps::default(),
            categories: vec![
                CategoryTime {
                    category: OpCategory::MatmulConv,
                    self_s: matmul,
                },
                CategoryTime {
                    category: OpCategory::Optimizer,
                    self_s: optimizer,
                },
            ],
            busy_s: matmul + optimizer,
            idle_s: idle,
        }
    }

    #[test]
    fn the_gap_splits_over_categories_per_sample() {
        // A: 3 steps of batch 10: matmul 0.3 s, optimizer 0.03 s, idle 0.
        // B: 2 steps of batch 10: matmul 0.2 s, optimizer 0.12 s, idle 0.02 s.
        let a = profile(0.3, 0.03, 0.0, 3);
        let b = profile(0.2, 0.12, 0.02, 2);
        let (sa, sb) = (summarize(&a, 10).unwrap(), summarize(&b, 10).unwrap());
        let g = profile_gap(&sa, &sb, "A", "B");
        let row = |c: Option<OpCategory>| g.rows.iter().find(|r| r.category == c).unwrap();
        assert!((row(Some(OpCategory::MatmulConv)).gap_s - 0.0).abs() < 1e-12);
        assert!((row(Some(OpCategory::Optimizer)).gap_s - (0.006 - 0.001)).abs() < 1e-12);
        assert!((row(None).gap_s - 0.001).abs() < 1e-12);
        assert!((g.gap_s - 0.006).abs() < 1e-12, "{g:?}");
        let share = row(Some(OpCategory::Optimizer)).share_of_gap.unwrap();
        assert!((share - 5.0 / 6.0).abs() < 1e-9);
        assert!(
            g.verdict.contains("optimizer accounts for 83 %"),
            "{}",
            g.verdict
        );
        // Repeats average per sample.
        let twice = average(&[&sa, &sa]).unwrap();
        assert_eq!(twice.values(), sa.values());
        assert_eq!(twice.steps, 6);
        // A profile that was not measured has no summary.
        let mut none = profile(0.0, 0.0, 0.0, 3);
        none.not_measured = Some("why".into());
        assert!(summarize(&none, 10).is_none());
    }
}
