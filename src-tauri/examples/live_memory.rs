//! Benchmark: the live view's memory for a run's telemetry — the host and 8
//! GPUs at 10 Hz for 1 hour and 24 hours — kept as the app keeps it (at most
//! `LIVE_POINTS_PER_SOURCE` points per source), against keeping every point.
//!
//!     cargo run --release -p trainbench-studio --example live_memory

use trainbench_studio::live_telemetry::{push, Thinning, LIVE_POINTS_PER_SOURCE};
use trainbench_studio::queue::LiveTelemetry;

fn rss_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix(field)?
                .trim()
                .trim_end_matches(" kB")
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

fn point(source: &str, t: u64) -> LiveTelemetry {
    LiveTelemetry {
        t_s: t as f64 / 10.0,
        source: source.to_owned(),
        memory_bytes: Some(60 << 30),
        util_percent: Some(97.0),
        power_w: Some(650.0),
        cpu_percent: None,
    }
}

fn main() {
    let sources: Vec<String> = std::iter::once("host".to_owned())
        .chain((0..8).map(|i| format!("gpu:{i}")))
        .collect();
    println!("| telemetry fed | points kept | live view (Vec) | process VmRSS |");
    println!("|---|---|---|---|");
    for (hours, bounded) in [(1u64, true), (24, true), (1, false)] {
        let mut series = Vec::new();
        let mut th = Thinning::default();
        for t in 0..hours * 36_000 {
            for s in &sources {
                if bounded {
                    push(&mut series, &mut th, point(s, t), LIVE_POINTS_PER_SOURCE);
                } else {
                    series.push(point(s, t));
                }
            }
        }
        let bytes = series.capacity() * std::mem::size_of::<LiveTelemetry>()
            + series.iter().map(|p| p.source.capacity()).sum::<usize>();
        println!(
            "| {hours} h × 9 sources{} | {} | {:.1} MiB | {:.0} MiB |",
            if bounded {
                ""
            } else {
                ", every point (before)"
            },
            series.len(),
            bytes as f64 / 1_048_576.0,
            rss_kib("VmRSS:") as f64 / 1024.0
        );
        drop(series);
    }
}
