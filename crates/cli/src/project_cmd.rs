//! `trainbench project RUN --gpu NAME | --threads N`: a stored run projected
//! to hardware it did not run on (`trainbench_app::projection`), every
//! figure a band and labelled projected.

use std::path::Path;
use std::process::ExitCode;

use trainbench_app::projection::{project, Target};
use trainbench_app::Workspace;
use trainbench_core::projection::Band;

use crate::error::CliError;
use crate::open::{open_workspace, parse_ids};

fn band(b: &Band, digits: usize) -> String {
    format!(
        "{:.digits$} – {:.digits$} (middle {:.digits$})",
        b.low, b.high, b.mid
    )
}

/// `project RUN --json`'s document: run `id` projected to `gpu` or `threads`.
pub fn project_json(
    ws: &Workspace,
    id: i64,
    gpu: Option<String>,
    threads: Option<u32>,
) -> Result<serde_json::Value, CliError> {
    let p = project(ws, id, &Target::choose(gpu, threads)?)?;
    serde_json::to_value(&p).map_err(|e| CliError::Failed(e.to_string()))
}

pub fn run(
    db: &Path,
    id: String,
    gpu: Option<String>,
    threads: Option<u32>,
    json_out: bool,
) -> Result<ExitCode, CliError> {
    let target = Target::choose(gpu.clone(), threads)?;
    let ws = open_workspace(db)?;
    let id = parse_ids(&[id])?[0];
    if json_out {
        println!("{}", project_json(&ws, id, gpu, threads)?);
        return Ok(ExitCode::SUCCESS);
    }
    let p = project(&ws, id, &target)?;
    println!(
        "run #{} on {} → {}: PROJECTED, not measured",
        p.run_id, p.from, p.to
    );
    println!(
        "  samples/s:       {} projected; measured on its own hardware: {:.1}",
        band(&p.samples_per_s, 1),
        p.measured_samples_per_s
    );
    if let Some(e) = &p.epoch_s {
        println!("  epoch:           {} s projected", band(e, 0));
    }
    match &p.cost_per_epoch_usd {
        Some(c) => println!(
            "  cost per epoch:  $ {} projected ({})",
            band(c, 2),
            p.price
        ),
        None => println!("  cost per epoch:  not projected ({})", p.price),
    }
    println!("  memory:          {}", p.memory);
    match &p.energy_j_per_sample {
        Some(e) => println!(
            "  energy:          {} J per sample projected ({})",
            band(e, 4),
            p.energy
        ),
        None => println!("  energy:          {}", p.energy),
    }
    println!("  method:          {}", p.method);
    Ok(ExitCode::SUCCESS)
}
