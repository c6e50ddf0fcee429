//! `trainbench prices`: the price table (list, add, edit, delete) under the one rule
//! set the desktop app's settings use too.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use trainbench_app::prices::PriceEdit;

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

pub fn run(db: &Path, cmd: Option<PriceCommand>, json_out: bool) -> Result<ExitCode, CliError> {
    let mut ws = open_workspace(db)?;
    match cmd {
        None | Some(PriceCommand::List) => {}
        Some(PriceCommand::Add(p)) => {
            ws.add_price(&edit(p))?;
        }
        Some(PriceCommand::Edit(p)) => {
            ws.edit_price(&edit(p))?;
        }
        Some(PriceCommand::Delete { offering }) => ws.delete_price(&offering)?,
    }
    let rows = ws.prices()?;
    if json_out {
        let v: Vec<_> = rows
            .iter()
            .map(|p| json!({"row": p.row, "edited_by_user": p.by_user}))
            .collect();
        println!("{}", json!({ "prices": v }));
    } else {
        output::print_prices(&rows);
    }
    Ok(ExitCode::SUCCESS)
}
