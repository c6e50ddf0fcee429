//! Long runs' telemetry averaged once their summary is stored: at most
//! [`KEEP_PER_SOURCE`] samples per source stay (`trainbench_core::downsample`),
//! each source replaced in one transaction, with the count before kept on
//! the run. Deleted rows leave free pages that later runs reuse (the file
//! shrinks only with `VACUUM`).

use rusqlite::params;
use trainbench_core::downsample::{downsample, width_for, KEEP_PER_SOURCE};

use crate::{Result, Store};

/// What compacting a run's telemetry did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compacted {
    pub before: u64,
    pub after: u64,
}

impl Store {
    /// Averages run `id`'s telemetry down to at most `keep` samples per
    /// source (default [`KEEP_PER_SOURCE`]). `None` when no source had more.
    /// Call it after the run's summary is stored: the summary uses every
    /// sample, the views and exports the averaged ones.
    pub fn compact_telemetry(&mut self, id: i64, keep: Option<usize>) -> Result<Option<Compacted>> {
        let keep = keep.unwrap_or(KEEP_PER_SOURCE);
        let sources: Vec<(String, u64, u64, u64)> = {
            let mut stmt = self.conn.prepare(
                "SELECT source, COUNT(*), MIN(t_ns), MAX(t_ns) FROM telemetry WHERE run_id = ?1 GROUP BY source",
            )?;
            let rows = stmt
                .query_map(params![id], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })?
                .collect::<rusqlite::Result<_>>()?;
            rows
        };
        if sources.iter().all(|(_, n, _, _)| *n as usize <= keep) {
            return Ok(None);
        }
        let before: u64 = sources.iter().map(|s| s.1).sum();
        self.conn.execute(
            "UPDATE runs SET telemetry_raw_samples = COALESCE(telemetry_raw_samples, ?2) WHERE id = ?1",
            params![id, crate::u(before)],
        )?;
        // One transaction per source: each is replaced whole, and other
        // writers wait seconds, not the whole run's worth.
        let mut after = 0;
        for (source, n, first, last) in &sources {
            if *n as usize <= keep {
                after += n;
                continue;
            }
            let tx = self
                .conn
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let samples = crate::measurements::telemetry_of(&tx, id, Some(source))?;
            let kept = downsample(&samples, width_for(last - first, keep));
            drop(samples);
            tx.execute(
                "DELETE FROM telemetry WHERE run_id = ?1 AND source = ?2",
                params![id, source],
            )?;
            crate::measurements::insert_telemetry(&tx, id, &kept)?;
            tx.commit()?;
            after += kept.len() as u64;
        }
        Ok(Some(Compacted { before, after }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewRun, TelemetrySample};
    use trainbench_core::spec::{CheckedSpec, Framework};

    fn sample(source: &str, i: u64) -> TelemetrySample {
        TelemetrySample {
            t_ns: 1_000_000_000 + i * 100_000_000,
            source: source.into(),
            rss_bytes: Some(if i == 777 { 5 << 30 } else { 1 << 30 }),
            power_w: Some(300.0 + (i % 10) as f64),
            energy_mj: Some(30_000 * i),
            ..Default::default()
        }
    }

    #[test]
    fn a_long_runs_telemetry_is_averaged_once_with_its_peaks_and_count_kept() {
        let mut store = Store::open_in_memory().unwrap();
        let spec = CheckedSpec::new(
            serde_json::from_value(
                serde_json::json!({"model": "resnet_mini", "batch_size": 8, "steps": 10}),
            )
            .unwrap(),
        )
        .unwrap();
        let id = store
            .insert_run(&NewRun::of_spec(Framework::Tch, None, &spec))
            .unwrap();
        let mut all: Vec<TelemetrySample> = (0..5_000).map(|i| sample("gpu:0", i)).collect();
        all.extend((0..300).map(|i| sample("host", i)));
        store.record(id, &[], &all).unwrap();
        assert_eq!(
            store.compact_telemetry(id, Some(10_000)).unwrap(),
            None,
            "under the bound"
        );

        let done = store.compact_telemetry(id, Some(1_000)).unwrap().unwrap();
        assert_eq!(done.before, 5_300);
        let kept = store.telemetry(id).unwrap();
        let gpu: Vec<&TelemetrySample> = kept.iter().filter(|s| s.source == "gpu:0").collect();
        assert!(gpu.len() <= 1_000 && gpu.len() >= 900, "{}", gpu.len());
        assert_eq!(
            kept.iter().filter(|s| s.source == "host").count(),
            300,
            "a short source stays whole"
        );
        assert_eq!(done.after as usize, kept.len());
        assert_eq!(
            gpu.iter().filter_map(|s| s.rss_bytes).max(),
            Some(5 << 30),
            "the peak survives"
        );
        assert_eq!(
            gpu.last().unwrap().energy_mj,
            Some(30_000 * 4_999),
            "the last counter reading"
        );
        let mean = gpu.iter().filter_map(|s| s.power_w).sum::<f64>() / gpu.len() as f64;
        assert!((mean - 304.5).abs() < 0.01, "{mean}");
        let detail = store.run_detail(id).unwrap();
        assert_eq!(detail.telemetry_raw_samples, Some(5_300));
        assert_eq!(detail.telemetry_samples, kept.len() as u64);
        // Again: nothing to do, the first count kept.
        assert_eq!(store.compact_telemetry(id, Some(1_000)).unwrap(), None);
        assert_eq!(
            store.run_detail(id).unwrap().telemetry_raw_samples,
            Some(5_300)
        );
        assert_eq!(store.integrity_check().unwrap(), "ok");
    }
}
