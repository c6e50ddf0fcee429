//! The operator profile's figures: self time per category per sample, and
//! how the gap between two runs splits over the categories (`explain`).

use serde::Serialize;

use crate::protocol::{OpCategory, OperatorProfile, ProfileTimeline};

/// One row of a profile per sample: a category, or idle (`category: None`).
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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

/// Seconds per sample of each category and of idle time, in
/// `OpCategory::ALL` order then idle; `None` when the profile was not
/// measured.
pub fn per_sample(p: &OperatorProfile, global_batch: u64) -> Option<Vec<f64>> {
    if p.not_measured.is_some() || p.steps == 0 || global_batch == 0 {
        return None;
    }
    let per = (p.steps * global_batch) as f64;
    let mut out: Vec<f64> = OpCategory::ALL
        .iter()
        .map(|&c| p.per_step(c).unwrap_or(0.0) * p.steps as f64 / per)
        .collect();
    out.push(p.idle_s / per);
    Some(out)
}

fn mean_rows(sides: &[(&OperatorProfile, u64)]) -> Option<Vec<f64>> {
    let rows: Vec<Vec<f64>> = sides
        .iter()
        .filter_map(|(p, gb)| per_sample(p, *gb))
        .collect();
    let first = rows.first()?;
    Some(
        (0..first.len())
            .map(|i| rows.iter().map(|r| r[i]).sum::<f64>() / rows.len() as f64)
            .collect(),
    )
}

fn timeline_text(t: Option<ProfileTimeline>) -> &'static str {
    match t {
        Some(ProfileTimeline::Device) => "device kernels",
        Some(ProfileTimeline::Host) => "host operators",
        None => "unknown",
    }
}

/// The gap between A's and B's profiles (each side: profiles with the
/// global batch of their run, averaged per sample), `None` when a side has
/// no measured profile.
pub fn profile_gap(
    a: &[(&OperatorProfile, u64)],
    b: &[(&OperatorProfile, u64)],
    a_label: &str,
    b_label: &str,
) -> Option<ProfileGap> {
    let ra = mean_rows(a)?;
    let rb = mean_rows(b)?;
    let ta: f64 = ra.iter().sum();
    let tb: f64 = rb.iter().sum();
    let gap = tb - ta;
    let labels = OpCategory::ALL
        .iter()
        .map(|c| (Some(*c), c.label()))
        .chain([(None, "idle")]);
    let rows: Vec<CategoryGap> = labels
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
    let (tl_a, tl_b) = (a[0].0.timeline, b[0].0.timeline);
    let mut note = format!(
        "A's profile reads {}, B's {}",
        timeline_text(tl_a),
        timeline_text(tl_b)
    );
    if tl_a != tl_b {
        note.push_str(": different timelines, so the categories are not like for like");
    }
    let verdict = match rows
        .iter()
        .filter(|r| r.gap_s.signum() == gap.signum())
        .max_by(|x, y| x.gap_s.abs().total_cmp(&y.gap_s.abs()))
    {
        Some(r) if gap.abs() > 0.0 => format!(
            "{} takes {} per sample {} than {}; {} accounts for {:.0} % of that in the operator profiles",
            if gap > 0.0 { b_label } else { a_label },
            crate::breakdown::fmt_s(gap.abs()),
            "more",
            if gap > 0.0 { a_label } else { b_label },
            r.label,
            r.share_of_gap.unwrap_or(0.0) * 100.0
        ),
        _ => "the operator profiles show no gap".to_owned(),
    };
    Some(ProfileGap {
        a_per_sample_s: ta,
        b_per_sample_s: tb,
        gap_s: gap,
        rows,
        note,
        verdict,
    })
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
        let g = profile_gap(&[(&a, 10)], &[(&b, 10)], "A", "B").unwrap();
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
        // A side without a measured profile gives no gap.
        let mut none = profile(0.0, 0.0, 0.0, 3);
        none.not_measured = Some("why".into());
        assert!(profile_gap(&[(&none, 10)], &[(&b, 10)], "A", "B").is_none());
    }
}
