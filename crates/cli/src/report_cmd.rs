//! `trainbench session …`, `export …` and `import`: flags parsed into the
//! app layer's selections, sessions and files; results printed.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use trainbench_app::reports::{parse_charts, Selected, Selection, Source, Written};
use trainbench_app::{SessionRef, Workspace};
use trainbench_core::compare::Grouping;
use trainbench_core::session::SessionSettings;

use crate::args::{ExportCommand, Selection as SelectionArgs, SessionCommand};
use crate::error::{bad, CliError};
use crate::open::{open_workspace, parse_ids};
use crate::output::print_compare;
use crate::output::stream::{JsonStringBody, Out};

/// A saved session named on the command line (a number no session is named is its id).
fn named(name: &str) -> SessionRef {
    SessionRef::Name(name.to_owned())
}

/// The comparison the flags select: a saved session or run ids.
fn select(ws: &Workspace, s: &SelectionArgs) -> Result<Selected, CliError> {
    let source = match &s.session {
        Some(name) => Source::Session(named(name)),
        None => Source::Runs(parse_ids(&s.ids)?),
    };
    let grouping = if s.by_config {
        Some(Grouping::Configurations)
    } else if matches!(source, Source::Runs(_)) {
        Some(Grouping::Runs)
    } else {
        None
    };
    Ok(ws.select(&Selection {
        source,
        grouping,
        baseline: s.baseline,
        settings: None,
    })?)
}

fn session_json(s: &trainbench_core::session::SavedSession) -> serde_json::Value {
    serde_json::to_value(s).unwrap_or_default()
}

pub fn session(db: &Path, command: SessionCommand, json_out: bool) -> Result<ExitCode, CliError> {
    let mut ws = open_workspace(db)?;
    match command {
        SessionCommand::Save {
            name,
            ids,
            baseline,
            by_config,
            charts,
        } => {
            let ids = parse_ids(&ids)?;
            let settings = SessionSettings {
                grouping: if by_config {
                    Grouping::Configurations
                } else {
                    Grouping::Runs
                },
                charts: parse_charts(&charts)?,
                hidden_series: Vec::new(),
            };
            let s = ws.save_session(&name, &ids, baseline, &settings)?;
            if json_out {
                println!("{}", session_json(&s));
            } else {
                println!(
                    "saved session {:?} (id {}) with {} runs",
                    s.name,
                    s.id,
                    s.run_ids.len()
                );
            }
        }
        SessionCommand::List if json_out => drop(write_sessions_json(&ws, Out::new())?),
        SessionCommand::List => {
            let sessions = ws.sessions()?;
            if sessions.is_empty() {
                println!("no saved sessions");
            } else {
                for s in sessions {
                    println!(
                        "{:>4}  {:<40} {:>3} runs  {}{}",
                        s.id,
                        s.name,
                        s.run_ids.len(),
                        trainbench_app::utc_text(s.updated_unix_ms),
                        s.imported_from
                            .map(|h| format!("  (imported from {h})"))
                            .unwrap_or_default()
                    );
                }
            }
        }
        SessionCommand::Show { name } => {
            let s = ws.session(&named(&name))?;
            // A session whose runs were deleted down to one still shows.
            let loaded = ws.session_comparison(&s)?;
            if json_out {
                println!(
                    "{}",
                    json!({"session": session_json(&s), "comparison": loaded.map(|l| l.comparison)})
                );
            } else {
                println!("session {:?} (id {}): runs {:?}", s.name, s.id, s.run_ids);
                match loaded {
                    Some(l) => print_compare(&l.comparison),
                    None => println!("fewer than 2 runs left: nothing to compare"),
                }
            }
        }
        SessionCommand::Rename { name, new_name } => {
            let s = ws.rename_session(&named(&name), &new_name)?;
            if json_out {
                println!("{}", session_json(&s));
            } else {
                println!("renamed session {} to {:?}", s.id, s.name);
            }
        }
        SessionCommand::Delete { name } => {
            let s = ws.delete_session(&named(&name))?;
            if json_out {
                println!("{}", json!({"deleted": s.id}));
            } else {
                println!("deleted session {:?} (its runs stay)", s.name);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `session list --json`'s document (`{"sessions": [...]}`), written a
/// session at a time as the store reads them. Returns the writer.
pub(crate) fn write_sessions_json<W: std::io::Write>(
    ws: &Workspace,
    mut out: Out<W>,
) -> Result<W, CliError> {
    let mut first = true;
    let written = out.text("{\"sessions\":[").and_then(|()| {
        ws.each_session(|s| {
            if !std::mem::take(&mut first) {
                out.text(",")?;
            }
            out.json(&session_json(&s))
        })
    });
    match written.and_then(|()| out.text("]}\n")) {
        Ok(()) => out.finish(),
        Err(e) => Err(out.failed(e)),
    }
}

/// What an export wrote: a line on stderr, or under `--json` one document
/// on stdout.
fn said(json_out: bool, written: &Written, extra: serde_json::Value, line: String) {
    if json_out {
        let mut v = serde_json::json!({"written": written});
        if let (Some(o), serde_json::Value::Object(more)) = (v.as_object_mut(), extra) {
            o.extend(more);
        }
        println!("{v}");
    } else {
        eprintln!("{line}");
    }
}

pub fn export(db: &Path, command: ExportCommand, json_out: bool) -> Result<ExitCode, CliError> {
    let ws = open_workspace(db)?;
    match command {
        ExportCommand::Pdf(r) => report_file(&ws, &r.selection, &r.output, json_out, |sel| {
            ws.pdf(sel, r.title.clone(), &[])
        })?,
        ExportCommand::Html(r) => report_file(&ws, &r.selection, &r.output, json_out, |sel| {
            ws.html(sel, r.title.clone(), &[]).map(String::into_bytes)
        })?,
        ExportCommand::Csv {
            ids,
            session,
            raw,
            run,
            output,
        } => {
            let bytes = match (raw, run) {
                (Some(raw), Some(run)) => ws.raw_csv(run, &raw)?,
                (None, Some(_)) => {
                    return Err(bad(
                        "run",
                        "run is only used with --raw windows|evals|telemetry".into(),
                    ))
                }
                _ => match (session, ids.is_empty()) {
                    (Some(name), _) => {
                        ws.runs_csv(&ws.runs_by_id(&ws.session(&named(&name))?.run_ids)?)?
                    }
                    (None, false) => ws.runs_csv(&ws.runs_by_id(&parse_ids(&ids)?)?)?,
                    (None, true) => return every_run_csv(&ws, output.as_deref(), json_out),
                },
            };
            csv_out(&ws, &bytes, output.as_deref(), json_out)?;
        }
        ExportCommand::Chart {
            kind,
            selection,
            output,
        } => {
            let kind = parse_charts(std::slice::from_ref(&kind))?[0];
            let sel = select(&ws, &selection)?;
            let written = ws.write_export(&output, &ws.chart(&sel, kind, &output)?)?;
            let line = format!("wrote {}", output.display());
            said(json_out, &written, serde_json::json!({}), line);
        }
        ExportCommand::Session { name, output } => {
            let (written, file) = ws.export_session(&named(&name), &output, None)?;
            let line = format!(
                "wrote {} ({} runs, {} bytes)",
                output.display(),
                file.runs.len(),
                written.bytes
            );
            said(
                json_out,
                &written,
                serde_json::json!({"runs": file.runs.len()}),
                line,
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A report (PDF or HTML) of a selection written to `output`, said with its
/// size, run count and time taken.
fn report_file(
    ws: &Workspace,
    selection: &SelectionArgs,
    output: &Path,
    json_out: bool,
    write: impl FnOnce(&Selected) -> trainbench_app::AppResult<Vec<u8>>,
) -> Result<(), CliError> {
    let started = std::time::Instant::now();
    let sel = select(ws, selection)?;
    let written = ws.write_export(output, &write(&sel)?)?;
    let line = format!(
        "wrote {} ({} bytes, {} runs) in {:.0} ms",
        output.display(),
        written.bytes,
        sel.loaded.runs.len(),
        started.elapsed().as_secs_f64() * 1000.0
    );
    let runs = serde_json::json!({"runs": sel.loaded.runs.len()});
    said(json_out, &written, runs, line);
    Ok(())
}

/// A CSV made whole: into `output`, or on stdout (under `--json` as the
/// document `{"csv": TEXT}`).
fn csv_out(
    ws: &Workspace,
    bytes: &[u8],
    output: Option<&Path>,
    json_out: bool,
) -> Result<(), CliError> {
    match output {
        Some(path) => {
            let written = ws.write_export(path, bytes)?;
            let line = format!("wrote {} ({} bytes)", path.display(), written.bytes);
            said(json_out, &written, serde_json::json!({}), line);
        }
        None if json_out => {
            let text = String::from_utf8_lossy(bytes);
            println!("{}", serde_json::json!({ "csv": text }));
        }
        None => {
            use std::io::Write;
            std::io::stdout()
                .write_all(bytes)
                .map_err(|e| CliError::Failed(format!("standard output: {e}")))?;
        }
    }
    Ok(())
}

/// `export csv` of every run, written a run at a time as the store reads
/// them, so that memory stays flat whatever the count: into a file (whole
/// or not at all), or on stdout (under `--json` in `{"csv": TEXT}`).
fn every_run_csv(
    ws: &Workspace,
    output: Option<&Path>,
    json_out: bool,
) -> Result<ExitCode, CliError> {
    if let Some(path) = output {
        let written = ws.export_runs_csv(path)?;
        let line = format!("wrote {} ({} bytes)", path.display(), written.bytes);
        said(json_out, &written, serde_json::json!({}), line);
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = Out::new();
    let written = if json_out {
        out.text("{\"csv\":\"")
            .and_then(|()| Ok(ws.write_runs_csv(JsonStringBody(out.raw()))?))
            .and_then(|()| out.text("\"}\n"))
    } else {
        ws.write_runs_csv(out.raw()).map_err(CliError::from)
    };
    match written {
        Ok(()) => drop(out.finish()?),
        Err(e) => return Err(out.failed(e)),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn import(db: &Path, file: &Path, json_out: bool) -> Result<ExitCode, CliError> {
    let imported = open_workspace(db)?.import_session_file(file)?;
    let outcome = &imported.outcome;
    if json_out {
        println!("{}", serde_json::to_value(outcome).unwrap_or_default());
    } else if outcome.session_created {
        println!(
            "imported session {:?} (id {}) from {}: {} runs new, {} already here",
            outcome.session_name,
            outcome.session_id,
            imported.from_host,
            outcome.runs_imported,
            outcome.runs_already_present
        );
    } else {
        println!(
            "session {:?} (id {}) is already here: nothing changed",
            outcome.session_name, outcome.session_id
        );
    }
    Ok(ExitCode::SUCCESS)
}
