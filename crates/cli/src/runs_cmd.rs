//! `trainbench runs`, `show`, `compare` and `delete`.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use trainbench_app::settings::DatabaseLocation;
use trainbench_core::compare::{compare as compare_rows, Grouping};
use trainbench_core::summary::RunStatus;

use crate::error::{bad, CliError};
use crate::open::{open_workspace, parse_ids};
use crate::output::{self, print_compare, print_runs_table, print_show, run_json};

/// Every stored run, after where the database is (and why that one); a run
/// whose row cannot be read is left out, named with the column at fault.
pub fn runs(at: &DatabaseLocation, json_out: bool) -> Result<ExitCode, CliError> {
    let list = open_workspace(&at.path)?.run_list()?;
    let rows = &list.rows;
    if json_out {
        println!(
            "{}",
            json!({"database": at, "runs": rows.iter().map(run_json).collect::<Vec<_>>(), "left_out": list.left_out})
        );
    } else {
        println!("Database: {}", at.describe());
        if rows.is_empty() && list.left_out.is_empty() {
            println!("No runs stored yet: `trainbench run` starts the quick benchmark.");
        } else if !rows.is_empty() {
            print_runs_table(rows);
        }
    }
    for d in &list.left_out {
        eprintln!("{}", d.message);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn show(db: &Path, id: String, json_out: bool) -> Result<ExitCode, CliError> {
    let ws = open_workspace(db)?;
    let id = parse_ids(&[id])?[0];
    let detail = ws.run_detail(id)?;
    let search = ws.batch_search_of_run(id)?;
    let record = trainbench_app::published::beside_record(&detail);
    let model_file = ws.model_file_of(&detail)?;
    if json_out {
        let mut v = serde_json::to_value(&detail).map_err(|e| CliError::Failed(e.to_string()))?;
        if let (Some(obj), serde_json::Value::Object(flat)) =
            (v.as_object_mut(), run_json(&detail.row))
        {
            for (k, val) in flat {
                obj.insert(k, val);
            }
            obj.insert("batch_search".into(), serde_json::json!(search));
            obj.insert("vs_record".into(), serde_json::json!(record));
            obj.insert("model_file".into(), serde_json::json!(model_file));
        }
        println!("{v}");
    } else {
        print_show(&detail);
        if let Some(f) = &model_file {
            println!(
                "model file: {} (SHA-256 {}); {}",
                f.reference,
                f.sha256,
                match f.kept_bytes {
                    Some(n) => format!("a copy of its {n} bytes is kept in the store"),
                    None => "no copy is kept in this store".to_owned(),
                }
            );
        }
        if let Some(s) = &search {
            output::print_batch_search(s);
        }
        output::print_vs_record(&record);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn compare(
    db: &Path,
    ids: &[String],
    baseline: Option<i64>,
    by_config: bool,
    json_out: bool,
) -> Result<ExitCode, CliError> {
    let ws = open_workspace(db)?;
    let ids = parse_ids(ids)?;
    let rows = ws.runs_by_id(&ids)?;
    let grouping = if by_config {
        Grouping::Configurations
    } else {
        Grouping::Runs
    };
    let c = compare_rows(&rows, grouping, baseline)?;
    // Each run beside its closest published result.
    let record: Vec<(i64, trainbench_core::published::Against)> = ids
        .iter()
        .filter_map(|id| {
            let d = ws.run_detail(*id).ok()?;
            let a = trainbench_app::published::beside_record(&d)
                .into_iter()
                .next()?;
            Some((*id, a))
        })
        .collect();
    if json_out {
        let mut v = output::compare_report(&rows, &c);
        if let Some(obj) = v.as_object_mut() {
            obj.insert(
                "vs_record".into(),
                serde_json::json!(record
                    .iter()
                    .map(|(id, a)| serde_json::json!({"run": id, "closest": a}))
                    .collect::<Vec<_>>()),
            );
        }
        println!("{v}");
    } else {
        print_runs_table(&rows);
        print_compare(&c);
        if !record.is_empty() {
            println!();
            println!("vs the record (achieved FLOP/s per device against the closest published result; `trainbench show N` lists more):");
            for (id, a) in &record {
                println!("  #{id}: {}", a.text);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn explain(
    db: &Path,
    a: i64,
    b: i64,
    by_config: bool,
    json_out: bool,
) -> Result<ExitCode, CliError> {
    let report = trainbench_app::explain::explain_runs(&open_workspace(db)?, a, b, by_config)?;
    if json_out {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        output::print_explain(&report);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn delete(db: &Path, ids: &[String], yes: bool, json_out: bool) -> Result<ExitCode, CliError> {
    let ids = parse_ids(ids)?;
    let mut ws = open_workspace(db)?;
    if !yes {
        let rows = ws.runs_by_id(&ids)?;
        if let Some(r) = rows
            .iter()
            .find(|r| matches!(r.status, RunStatus::Queued | RunStatus::Running))
        {
            return Err(bad(
                "id",
                format!(
                    "id = {} is not allowed: the run is {}, and only finished runs are deleted",
                    r.id,
                    r.status.as_str()
                ),
            ));
        }
        let words: Vec<String> = rows.iter().map(|r| r.id.to_string()).collect();
        let confirm = format!("trainbench delete {} --yes", words.join(" "));
        if json_out {
            let would: Vec<_> = rows
                .iter()
                .map(|r| json!({"id": r.id, "model": r.model, "framework": r.framework.as_str(), "status": r.status.as_str()}))
                .collect();
            println!(
                "{}",
                json!({"deleted": 0, "would_delete": would, "confirm": confirm})
            );
        } else {
            println!(
                "Would delete {} run(s) with all their data (nothing deleted yet):",
                rows.len()
            );
            for r in &rows {
                println!(
                    "  run {}: {} on {} ({})",
                    r.id,
                    r.model,
                    r.framework.as_str(),
                    r.status.as_str()
                );
            }
            println!("To delete them: {confirm}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let n = ws.delete_runs(&ids)?;
    if json_out {
        println!("{}", json!({"deleted": n, "ids": ids}));
    } else {
        println!("deleted {n} run(s)");
    }
    Ok(ExitCode::SUCCESS)
}
