//! Runs grouped into entries, every metric valued and decided, against a
//! baseline: the comparison the views, reports and CLI show.

use super::*;

/// Builds the comparison of `rows` (in the order given), each run an entry or
/// the repeats of each configuration one entry. The baseline is the entry that
/// holds `baseline_run` (the first entry when `None`).
pub fn compare(
    rows: &[RunRow],
    grouping: Grouping,
    baseline_run: Option<i64>,
) -> Result<Comparison, CompareError> {
    let groups = group_runs(rows, grouping);
    if groups.len() < 2 {
        return Err(CompareError::TooFew {
            given: groups.len(),
        });
    }
    let baseline = match baseline_run {
        None => 0,
        Some(id) => groups
            .iter()
            .position(|g| g.1.iter().any(|r| r.id == id))
            .ok_or(CompareError::BaselineNotCompared(id))?,
    };
    let mut entries: Vec<CompareEntry> =
        groups.iter().map(|(key, runs)| entry(key, runs)).collect();
    let shared_label = labels::label_by_difference(&mut entries, &groups, grouping);
    set_deltas(&mut entries, baseline);
    let scaling = scaling(&groups, &mut entries);
    let mut warnings = warnings(rows, &entries, baseline);
    let decisions = Metric::ALL
        .into_iter()
        .map(|m| decide(m, &entries))
        .collect();
    let speedups = speedups(&groups, &entries, baseline);
    warnings.extend(super::releases::regressions(&groups, &speedups, baseline));
    let explanations = explanations(&entries, baseline);
    let profile_gaps = profile_gaps(&entries, baseline);
    Ok(Comparison {
        grouping,
        shared_label,
        baseline,
        entries,
        decisions,
        scaling,
        warnings,
        speedups,
        explanations,
        profile_gaps,
    })
}

/// The runs of a comparison, one group per run or per configuration, in
/// the order given.
fn group_runs(rows: &[RunRow], grouping: Grouping) -> Vec<(String, Vec<&RunRow>)> {
    let mut groups: Vec<(String, Vec<&RunRow>)> = Vec::new();
    for r in rows {
        let key = match grouping {
            Grouping::Runs => r.id.to_string(),
            Grouping::Configurations => r.config_key.clone(),
        };
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    groups
}

/// One entry: a run, or the repeats of a configuration.
fn entry(key: &str, runs: &[&RunRow]) -> CompareEntry {
    let first = runs[0];
    CompareEntry {
        key: key.to_owned(),
        // What sets it apart is known once every entry is built
        // (`labels::label_by_difference`).
        label: String::new(),
        full_label: config_label(first),
        run_ids: runs.iter().map(|r| r.id).collect(),
        runs_completed: runs
            .iter()
            .filter(|r| r.status == RunStatus::Completed)
            .count(),
        framework: first.framework.to_string(),
        model: first.model.clone(),
        precision: first.precision.to_string(),
        devices: first.devices,
        batch_size: first.batch_size,
        global_batch: first.batch_size * u64::from(first.devices),
        data: first.data.as_str().to_owned(),
        param_count: first.param_count,
        metrics: Metric::ALL
            .into_iter()
            .map(|m| (m, metric_value(m, runs)))
            .collect(),
        scaling_efficiency: None,
        single_device_entry: None,
        breakdown: crate::breakdown::average(
            &runs
                .iter()
                .filter(|r| r.status == RunStatus::Completed)
                .filter_map(|r| r.summary.as_ref()?.breakdown.as_ref())
                .collect::<Vec<_>>(),
        ),
        profile: crate::profile::average(
            &runs
                .iter()
                .filter(|r| r.status == RunStatus::Completed)
                .filter_map(|r| r.summary.as_ref()?.profile_per_sample.as_ref())
                .collect::<Vec<_>>(),
        ),
    }
}

/// Each metric's change against the baseline entry's.
fn set_deltas(entries: &mut [CompareEntry], baseline: usize) {
    let base_values: BTreeMap<Metric, Option<f64>> = entries[baseline]
        .metrics
        .iter()
        .map(|(m, v)| (*m, v.value))
        .collect();
    for e in entries.iter_mut() {
        for (m, v) in e.metrics.iter_mut() {
            v.delta_vs_baseline = match (v.value, base_values.get(m).copied().flatten()) {
                (Some(a), Some(b)) if b != 0.0 => Some((a - b) / b),
                _ => None,
            };
        }
    }
}

/// Scaling series: entries equal but for their device count, each device
/// count's efficiency against the single-device entry.
fn scaling(groups: &[(String, Vec<&RunRow>)], entries: &mut [CompareEntry]) -> Vec<ScalingSeries> {
    let stripped: Vec<&str> = groups
        .iter()
        .map(|(_, runs)| runs[0].scaling_key.as_str())
        .collect();
    let mut scaling: Vec<ScalingSeries> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, &key) in stripped.iter().enumerate() {
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let mut points: Vec<(u32, usize)> = stripped
            .iter()
            .enumerate()
            .filter(|(_, &k)| k == key)
            .map(|(j, _)| (entries[j].devices, j))
            .collect();
        points.sort_unstable();
        points.dedup_by_key(|p| p.0);
        if points.len() < 2 {
            continue;
        }
        let one = points
            .iter()
            .find(|p| p.0 == 1)
            .map(|p| p.1)
            .filter(|&j| entries[j].runs_completed > 0);
        if let Some(one) = one {
            let tp1 = entries[one].metrics[&Metric::Throughput].value;
            let one_key = entries[one].key.clone();
            for &(devices, j) in points.iter().filter(|p| p.0 > 1) {
                let tp = entries[j].metrics[&Metric::Throughput].value;
                entries[j].scaling_efficiency = scaling_efficiency(tp, devices, tp1);
                entries[j].single_device_entry = Some(one_key.clone());
            }
        }
        let e = &entries[i];
        scaling.push(ScalingSeries {
            label: format!(
                "{} {} {} b{}/device {}",
                e.framework, e.model, e.precision, e.batch_size, e.data
            ),
            points,
        });
    }
    scaling
}

/// What makes the comparison less than fair: different models, batches or
/// data than the baseline, runs not completed, each run's own warnings, runs
/// measured on different machines.
fn warnings(rows: &[RunRow], entries: &[CompareEntry], baseline: usize) -> Vec<String> {
    let mut warnings = Vec::new();
    let base = &entries[baseline];
    for e in entries.iter().filter(|e| e.key != base.key) {
        if e.param_count != base.param_count {
            // One model by name (`--model-name`) in two frameworks: its
            // versions are not the same network.
            let what = if e.model == base.model {
                format!(
                    "the versions of {} are not the same network (check each framework's definition)",
                    e.model
                )
            } else {
                "different models are being compared".to_owned()
            };
            warnings.push(format!(
                "{} has {} parameters, the baseline {} has {}: {what}",
                e.label,
                count_text(e.param_count),
                base.label,
                count_text(base.param_count)
            ));
        }
        if e.global_batch != base.global_batch {
            warnings.push(format!(
                "{} has global batch {}, the baseline has {}",
                e.label, e.global_batch, base.global_batch
            ));
        }
        if e.data != base.data {
            warnings.push(format!(
                "{} trains on {}, the baseline on {}",
                e.label, e.data, base.data
            ));
        }
    }
    for r in rows.iter().filter(|r| r.status != RunStatus::Completed) {
        warnings.push(format!(
            "run {} is {}{}: its numbers are partial",
            r.id,
            r.status.as_str(),
            r.status_reason
                .as_deref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default()
        ));
    }
    for r in rows {
        for w in r.summary.iter().flat_map(|s| &s.warnings) {
            warnings.push(format!("run {}: {}", r.id, w.message));
        }
    }
    let mut machines: Vec<String> = rows
        .iter()
        .map(|r| match &r.origin {
            Some(o) => format!("{} (imported)", o.hostname),
            None => "this machine".to_string(),
        })
        .collect();
    machines.sort();
    machines.dedup();
    if machines.len() > 1 {
        warnings.push(format!(
            "the runs were measured on different machines: {}",
            machines.join(", ")
        ));
    }
    warnings
}

/// Speed-ups against the baseline, from the runs' own throughputs.
fn speedups(
    groups: &[(String, Vec<&RunRow>)],
    entries: &[CompareEntry],
    baseline: usize,
) -> Vec<Speedup> {
    let throughputs = |runs: &[&RunRow]| -> Vec<(f64, Option<Interval>)> {
        runs.iter()
            .filter_map(|r| {
                let s = r.summary.as_ref()?;
                Some((s.throughput_samples_per_s?, s.throughput_ci95))
            })
            .collect()
    };
    let has_throughput = |e: &CompareEntry| {
        e.metrics
            .get(&Metric::Throughput)
            .is_some_and(|m| m.value.is_some())
    };
    let base_tp = throughputs(&groups[baseline].1);
    // A single run's steady window throughputs (for the bootstrap).
    let windows_of = |runs: &[&RunRow]| -> Vec<f64> {
        match runs {
            [r] => r
                .summary
                .as_ref()
                .map(|s| s.steady_window_throughputs.clone())
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    };
    let base_windows = windows_of(&groups[baseline].1);
    let base_has_throughput = has_throughput(&entries[baseline]);
    entries
        .iter()
        .enumerate()
        .filter(|(i, e)| *i != baseline && base_has_throughput && has_throughput(e))
        .filter_map(|(i, e)| {
            speedup::speedup(
                i,
                &e.label,
                &entries[baseline].label,
                &throughputs(&groups[i].1),
                &base_tp,
                (&windows_of(&groups[i].1), &base_windows),
            )
        })
        .collect()
}

/// Each entry's step breakdown against the baseline's, part by part.
fn explanations(entries: &[CompareEntry], baseline: usize) -> Vec<EntryExplanation> {
    match &entries[baseline].breakdown {
        Some(base) => entries
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != baseline)
            .filter_map(|(i, e)| {
                Some(EntryExplanation {
                    entry: i,
                    explanation: crate::breakdown::explain(
                        base,
                        e.breakdown.as_ref()?,
                        &entries[baseline].label,
                        &e.label,
                    ),
                })
            })
            .collect(),
        None => Vec::new(),
    }
}

/// Each entry's operator profile against the baseline's, by category.
fn profile_gaps(entries: &[CompareEntry], baseline: usize) -> Vec<EntryProfileGap> {
    match &entries[baseline].profile {
        Some(base) => entries
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != baseline)
            .filter_map(|(i, e)| {
                Some(EntryProfileGap {
                    entry: i,
                    gap: crate::profile::profile_gap(
                        base,
                        e.profile.as_ref()?,
                        &entries[baseline].label,
                        &e.label,
                    ),
                })
            })
            .collect(),
        None => Vec::new(),
    }
}

fn count_text(n: Option<u64>) -> String {
    n.map_or("an unknown number of".into(), |n| n.to_string())
}
