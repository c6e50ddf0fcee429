//! `trainbench prices`: the price table (list, add, edit, delete) under the one rule
//! set the desktop app's settings use too.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use trainbench_app::prices::{PriceChange, PriceEdit};

use crate::args::{PriceArgs, PriceCommand};
use crate::error::CliError;
use crate::open::open_workspace;
use crate::output;

fn edit(p: PriceArgs) -> PriceEdit {
    PriceEdit {
        offering: p.offering,
        devices: p.devices,
        device: p.device,
        usd_per_hour: p.usd_per_hour,
        usd_per_device_hour: p.usd_per_device_hour,
        as_of: p.as_of,
        source: p.source,
    }
}

/// The line that says what an add or edit changed: "added X: …" or
/// "edited X: usd_per_hour 6 → 8, usd_per_device_hour 1.5 → 2".
fn change_line(verb: &str, c: &PriceChange) -> String {
    let parts: Vec<String> = c
        .changed()
        .into_iter()
        .map(|(field, old, new)| match c.before {
            Some(_) => format!("{field} {old} → {new}"),
            None => format!("{field} {new}"),
        })
        .collect();
    if parts.is_empty() {
        format!("{verb} {}: nothing changed", c.row.offering)
    } else {
        format!("{verb} {}: {}", c.row.offering, parts.join(", "))
    }
}

fn change_json(action: &str, c: &PriceChange) -> serde_json::Value {
    let fields: Vec<_> = c
        .changed()
        .into_iter()
        .map(|(field, old, new)| json!({"field": field, "before": c.before.as_ref().map(|_| old), "after": new}))
        .collect();
    json!({"action": action, "offering": c.row.offering, "fields": fields, "warning": c.warning})
}

pub fn run(db: &Path, cmd: Option<PriceCommand>, json_out: bool) -> Result<ExitCode, CliError> {
    let mut ws = open_workspace(db)?;
    let (line, changed) = match cmd {
        None | Some(PriceCommand::List) => (None, serde_json::Value::Null),
        Some(PriceCommand::Add(p)) => {
            let c = ws.add_price(&edit(p))?;
            (
                Some((change_line("added", &c), c.warning.clone())),
                change_json("added", &c),
            )
        }
        Some(PriceCommand::Edit(p)) => {
            let c = ws.edit_price(&edit(p))?;
            (
                Some((change_line("edited", &c), c.warning.clone())),
                change_json("edited", &c),
            )
        }
        Some(PriceCommand::Delete { offering }) => {
            ws.delete_price(&offering)?;
            let said = format!("deleted {offering}");
            (
                Some((said, None)),
                json!({"action": "deleted", "offering": offering}),
            )
        }
    };
    let rows = ws.prices()?;
    if json_out {
        let v: Vec<_> = rows
            .iter()
            .map(|p| json!({"row": p.row, "edited_by_user": p.by_user}))
            .collect();
        println!("{}", json!({ "prices": v, "changed": changed }));
    } else {
        output::print_prices(&rows);
    }
    if let Some((said, warning)) = line {
        // After the table, so the last thing read says what changed.
        if json_out {
            eprintln!("trainbench: {said}");
        } else {
            println!("\n{said}");
        }
        if let Some(w) = warning {
            eprintln!("trainbench: warning: {w}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
