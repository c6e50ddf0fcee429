//! `trainbench runs`, `show`, `compare` and `delete`.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Value};
use trainbench_app::settings::DatabaseLocation;
use trainbench_app::{Listed, RunListing, Workspace};
use trainbench_core::compare::{compare as compare_rows, Comparison, Grouping};
use trainbench_core::published::Against;
use trainbench_core::record::RunRow;
use trainbench_core::summary::RunStatus;

use crate::error::{bad, CliError};
use crate::open::{open_workspace, parse_ids};
use crate::output::stream::Out;
use crate::output::{self, print_compare, print_runs_table, print_show, run_json};

/// `runs --json`'s document: where the database is, its runs, and those left
/// out (also what the MCP server's `runs` tool returns).
pub fn runs_json(ws: &Workspace, at: &DatabaseLocation) -> Result<(Value, RunListing), CliError> {
    let list = ws.run_list()?;
    let v = json!({"database": at, "runs": list.rows.iter().map(run_json).collect::<Vec<_>>(), "left_out": list.left_out});
    Ok((v, list))
}

/// Every stored run, after where the database is (and why that one); a run
/// whose row cannot be read is left out, named with the column at fault.
pub fn runs(at: &DatabaseLocation, json_out: bool) -> Result<ExitCode, CliError> {
    let ws = open_workspace(&at.path)?;
    if json_out {
        let (_, left_out) = write_runs_json(&ws, at, Out::new())?;
        for message in left_out {
            eprintln!("{message}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let list = ws.run_list()?;
    let rows = &list.rows;
    println!("Database: {}", at.describe());
    if rows.is_empty() && list.left_out.is_empty() {
        println!("No runs stored yet: `trainbench run` starts the quick benchmark.");
    } else if !rows.is_empty() {
        print_runs_table(rows);
    }
    for d in &list.left_out {
        eprintln!("{}", d.message);
    }
    Ok(ExitCode::SUCCESS)
}

/// [`runs_json`]'s document byte for byte, written a run at a time so that
/// only one run is in memory whatever the count. Returns the writer and the
/// lines that name the runs left out.
pub(crate) fn write_runs_json<W: Write>(
    ws: &Workspace,
    at: &DatabaseLocation,
    mut out: Out<W>,
) -> Result<(W, Vec<String>), CliError> {
    let mut messages = Vec::new();
    let mut first = true;
    let database = serde_json::to_value(at).map_err(|e| CliError::Failed(e.to_string()))?;
    let streamed = ws.stream_run_list(|item| match item {
        Listed::LeftOut(left_out) => {
            // The keys in the order `Value` sorts them: database, left_out, runs.
            out.text("{\"database\":")?;
            out.json(&database)?;
            out.text(",\"left_out\":")?;
            out.json(&json!(left_out))?;
            messages = left_out.into_iter().map(|d| d.message).collect();
            out.text(",\"runs\":[")
        }
        Listed::Run(row) => {
            if !std::mem::take(&mut first) {
                out.text(",")?;
            }
            out.json(&run_json(&row))
        }
    });
    match streamed.and_then(|()| out.text("]}\n")) {
        Ok(()) => Ok((out.finish()?, messages)),
        Err(e) => Err(out.failed(e)),
    }
}

/// `show ID --json`'s document: the run's detail, its flat row, its batch
/// search, the published results beside it and its model file.
pub fn show_json(ws: &Workspace, id: i64, beside_record: bool) -> Result<Value, CliError> {
    let detail = ws.run_detail(id)?;
    let search = ws.batch_search_of_run(id)?;
    let record = trainbench_app::published::placement(&detail, beside_record);
    let model_file = ws.model_file_of(&detail)?;
    let mut v = serde_json::to_value(&detail).map_err(|e| CliError::Failed(e.to_string()))?;
    if let (Some(obj), Value::Object(flat)) = (v.as_object_mut(), run_json(&detail.row)) {
        for (k, val) in flat {
            obj.insert(k, val);
        }
        obj.insert("batch_search".into(), json!(search));
        obj.insert("vs_record".into(), json!(record.against));
        obj.insert("vs_record_not_placed".into(), json!(record.not_placed));
        obj.insert("model_file".into(), json!(model_file));
    }
    Ok(v)
}

pub fn show(
    db: &Path,
    id: String,
    beside_record: bool,
    json_out: bool,
) -> Result<ExitCode, CliError> {
    let ws = open_workspace(db)?;
    let id = parse_ids(&[id])?[0];
    if json_out {
        println!("{}", show_json(&ws, id, beside_record)?);
        return Ok(ExitCode::SUCCESS);
    }
    let detail = ws.run_detail(id)?;
    let search = ws.batch_search_of_run(id)?;
    let record = trainbench_app::published::placement(&detail, beside_record);
    let model_file = ws.model_file_of(&detail)?;
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
    Ok(ExitCode::SUCCESS)
}

/// The runs compared (`--by-config`: repeats grouped; `baseline`: the run
/// the others are measured against), each beside its closest published
/// result where that means something.
pub struct Compared {
    pub rows: Vec<RunRow>,
    pub comparison: Comparison,
    pub record: Vec<(i64, Against)>,
    /// Why runs were not placed beside the record, each reason once.
    pub not_placed: Vec<String>,
}

impl Compared {
    pub fn load(
        ws: &Workspace,
        ids: &[i64],
        baseline: Option<i64>,
        by_config: bool,
        beside_record: bool,
    ) -> Result<Compared, CliError> {
        let rows = ws.runs_by_id(ids)?;
        let grouping = if by_config {
            Grouping::Configurations
        } else {
            Grouping::Runs
        };
        let comparison = compare_rows(&rows, grouping, baseline)?;
        let placed = trainbench_app::published::placed_by_id(ws, ids, beside_record)?;
        Ok(Compared {
            rows,
            comparison,
            record: placed.closest,
            not_placed: placed.not_placed,
        })
    }

    /// `compare --json`'s document.
    pub fn to_json(&self) -> Value {
        let mut v = output::compare_report(&self.rows, &self.comparison);
        if let Some(obj) = v.as_object_mut() {
            obj.insert(
                "vs_record".into(),
                json!(self
                    .record
                    .iter()
                    .map(|(id, a)| json!({"run": id, "closest": a}))
                    .collect::<Vec<_>>()),
            );
            obj.insert("vs_record_not_placed".into(), json!(self.not_placed));
        }
        v
    }
}

pub fn compare(
    db: &Path,
    ids: &[String],
    baseline: Option<i64>,
    by_config: bool,
    beside_record: bool,
    json_out: bool,
) -> Result<ExitCode, CliError> {
    let ws = open_workspace(db)?;
    let c = Compared::load(&ws, &parse_ids(ids)?, baseline, by_config, beside_record)?;
    if json_out {
        println!("{}", c.to_json());
    } else {
        print_runs_table(&c.rows);
        print_compare(&c.comparison);
        if !c.record.is_empty() {
            println!();
            println!("vs the record (achieved FLOP/s per device against the closest published result; `trainbench show N` lists more):");
            for (id, a) in &c.record {
                println!("  #{id}: {}", a.text);
            }
        }
        output::print_not_placed(&c.not_placed);
    }
    Ok(ExitCode::SUCCESS)
}

/// `explain A B --json`'s document.
pub fn explain_json(ws: &Workspace, a: i64, b: i64, by_config: bool) -> Result<Value, CliError> {
    let report = trainbench_app::explain::explain_runs(ws, a, b, by_config)?;
    serde_json::to_value(&report).map_err(|e| CliError::Failed(e.to_string()))
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
