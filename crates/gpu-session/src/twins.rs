//! H100 against H200: every studio run of a session on one is projected to
//! the other (`trainbench_app::projection`), and a session measured on the other
//! checks those projections — the projection's error on real GPUs, which
//! `fold --against` writes into docs/gpu-results.md. In a rehearsal each run
//! is projected to two threads of the same CPU, so the path is exercised.

use serde_json::Value;
use trainbench_core::reference::gpu_peak_for;

use super::result::ProjectedTo;
use super::result::{ItemResult, Status};
use super::Session;
use trainbench_app::projection::{project as project_run, Target};
use trainbench_app::workspace::Workspace;

/// The GPU kinds this project's machines come in: each session projects to
/// the one it is not on.
pub const TWINS: [&str; 2] = ["H100 SXM", "H200"];

/// The peak table's name of the session's GPU (`None` on the CPU or an
/// unknown GPU).
fn device_of(results: &Value) -> Option<String> {
    let name = results["session"]["gpus"].get(0)?["name"].as_str()?;
    gpu_peak_for(name).map(|p| p.device)
}

/// Projections of an item's run to the twin GPU (or, rehearsing, to two threads).
pub fn project(ws: &Workspace, s: &Session, r: &ItemResult) -> Vec<ProjectedTo> {
    let Some(id) = r.run_ids.first().filter(|_| r.status == Status::Ran) else {
        return Vec::new();
    };
    let here = s
        .gpus
        .first()
        .and_then(|g| gpu_peak_for(&g.name))
        .map(|p| p.device);
    let targets: Vec<Target> = if s.rehearse {
        vec![Target::Threads(2)]
    } else {
        TWINS
            .iter()
            .filter(|t| here.as_deref() != Some(**t))
            .map(|t| Target::Gpu((*t).to_owned()))
            .collect()
    };
    targets
        .iter()
        .filter_map(|t| project_run(ws, *id, t).ok())
        .map(|p| ProjectedTo {
            to: p.to,
            low: p.samples_per_s.low,
            mid: p.samples_per_s.mid,
            high: p.samples_per_s.high,
        })
        .collect()
}

/// Rows checking `other`'s projections to this session's GPU against what
/// this session measured: item, projected band, measured, inside, error.
pub fn check_against(here: &Value, other: &Value) -> Vec<Vec<String>> {
    let Some(device) = device_of(here) else {
        return Vec::new();
    };
    let from = device_of(other).unwrap_or_else(|| "another machine".into());
    let others = other["results"].as_array().cloned().unwrap_or_default();
    here["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["status"] == "ran" && r["peer"].is_null())
        .filter_map(|r| {
            let measured = r["samples_per_s"].as_f64()?;
            let theirs = others.iter().find(|o| o["id"] == r["id"])?;
            let p: Vec<ProjectedTo> = serde_json::from_value(theirs["projected"].clone()).ok()?;
            let p = p.into_iter().find(|p| p.to == device)?;
            let inside = p.low <= measured && measured <= p.high;
            Some(vec![
                r["id"].as_str().unwrap_or_default().to_owned(),
                format!("{from}: {:.1} – {:.1} (middle {:.1})", p.low, p.high, p.mid),
                format!("{measured:.1}"),
                if inside { "yes".into() } else { "no".into() },
                format!("{:+.1} %", 100.0 * (measured / p.mid - 1.0)),
            ])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_h200_session_checks_what_an_h100_session_projected_for_it() {
        let h100 = json!({"session": {"gpus": [{"name": "NVIDIA H100 80GB HBM3"}]}, "results": [
            {"id": "vit-eager", "status": "ran", "samples_per_s": 1883.7, "peer": null,
             "projected": [{"to": "H200", "low": 1900.0, "mid": 2100.0, "high": 2400.0}]},
            {"id": "vit-timm", "status": "ran", "samples_per_s": 1800.0, "peer": {"library": "timm"}, "projected": []},
        ]});
        let h200 = json!({"session": {"gpus": [{"name": "NVIDIA H200"}]}, "results": [
            {"id": "vit-eager", "status": "ran", "samples_per_s": 2205.0, "peer": null, "projected": []},
            {"id": "vit-timm", "status": "ran", "samples_per_s": 2100.0, "peer": {"library": "timm"}, "projected": []},
            {"id": "resnet-eager", "status": "skipped", "samples_per_s": null, "peer": null, "projected": []},
        ]});
        let rows = check_against(&h200, &h100);
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0][0], "vit-eager");
        assert!(
            rows[0][1].starts_with("H100 SXM: 1900.0 – 2400.0"),
            "{:?}",
            rows[0]
        );
        assert_eq!(rows[0][3], "yes");
        assert_eq!(rows[0][4], "+5.0 %");
        // A CPU session has no GPU to check against.
        assert!(check_against(&json!({"session": {"gpus": []}, "results": []}), &h100).is_empty());
    }
}
