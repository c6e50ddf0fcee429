//! A batch search in words, the same lines for both front ends: the CLI
//! prints them on stderr, the desktop shows them under the wizard's Start
//! while the probes run.

use trainbench_core::batch_search::{BatchProbe, ProbeOutcome};

use crate::batch::SearchProgress;

/// Search progress turned into lines of text, each handed to `say`.
pub struct Narrated<F: FnMut(String)> {
    pub say: F,
}

/// Bytes in MiB, for a person ("812 MiB").
pub(crate) fn mib(b: u64) -> String {
    format!("{:.0} MiB", b as f64 / 1_048_576.0)
}

/// One probe's result: "batch 64 fits (peak 812 MiB (process_rss), 3.1 s)".
pub fn probe_text(p: &BatchProbe) -> String {
    let peak = p
        .peak_memory_bytes
        .map_or("peak not measured".to_owned(), |b| {
            format!(
                "peak {} ({})",
                mib(b),
                p.peak_memory_source.as_deref().unwrap_or("?")
            )
        });
    let why = match (&p.outcome, &p.reason) {
        (ProbeOutcome::Fits, _) | (_, None) => String::new(),
        (_, Some(r)) => format!(": {r}"),
    };
    format!(
        "batch {} {} ({peak}, {:.1} s){why}",
        p.batch_size,
        p.outcome.label(),
        p.seconds
    )
}

impl<F: FnMut(String)> SearchProgress for Narrated<F> {
    fn probing(&mut self, config: &str, batch: u32) {
        (self.say)(format!("batch search {config}: probing batch {batch}"));
    }
    fn probed(&mut self, config: &str, probe: &BatchProbe) {
        (self.say)(format!("batch search {config}: {}", probe_text(probe)));
    }
    fn chosen(&mut self, config: &str, batch: Result<u32, &str>) {
        (self.say)(match batch {
            Ok(b) => format!("batch search {config}: runs at batch {b}, the largest that fits"),
            Err(why) => format!("batch search {config}: {why}"),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_event_is_one_line_naming_the_configuration() {
        let mut lines = Vec::new();
        let mut n = Narrated {
            say: |l: String| lines.push(l),
        };
        n.probing("tch resnet_mini", 64);
        n.probed(
            "tch resnet_mini",
            &BatchProbe {
                batch_size: 64,
                outcome: ProbeOutcome::OutOfMemory,
                peak_memory_bytes: Some(3 * 1_048_576),
                peak_memory_source: Some("allocator".into()),
                seconds: 2.04,
                reason: Some("CUDA out of memory".into()),
            },
        );
        n.chosen("tch resnet_mini", Ok(32));
        n.chosen("jax vit", Err("no batch fits"));
        assert_eq!(
            lines,
            [
                "batch search tch resnet_mini: probing batch 64",
                "batch search tch resnet_mini: batch 64 out of memory (peak 3 MiB (allocator), 2.0 s): CUDA out of memory",
                "batch search tch resnet_mini: runs at batch 32, the largest that fits",
                "batch search jax vit: no batch fits",
            ]
        );
    }
}
