//! `trainbench session …`, `export …`, `import` and `delete`: thin adapters
//! over the store (sessions, session files) and the report crate (PDF, CSV,
//! charts).

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use trainbench_core::compare::{CompareError, Grouping};
use trainbench_core::session::{ChartKind, SessionFile, SessionSettings, MAX_SESSION_FILE_BYTES};
use trainbench_report::{charts, csv, pdf};
use trainbench_store::{now_unix_ms, LoadedComparison, Store, StoreError};

use crate::args::{ExportCommand, Selection, SessionCommand};
use crate::output::print_compare;
use crate::{bad, open_store, parse_ids, CliError};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Writes a file whole or not at all (a temporary file beside it, renamed).
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    trainbench_report::write_atomic(path, bytes).map_err(|e| match e {
        trainbench_report::ReportError::Invalid { field, .. } => bad(field, e.to_string()),
        e => CliError::Failed(e.to_string()),
    })
}

fn parse_charts(names: &[String]) -> Result<Vec<ChartKind>, CliError> {
    if names.is_empty() {
        return Ok(ChartKind::ALL.to_vec());
    }
    names
        .iter()
        .map(|n| {
            ChartKind::parse(n).ok_or_else(|| {
                bad(
                    "charts",
                    format!(
                        "charts = {n} is not allowed: expected {}",
                        ChartKind::ALL.map(ChartKind::key).join(", ")
                    ),
                )
            })
        })
        .collect()
}

/// A comparison as selected on the command line, with its title and settings.
struct Selected {
    title: String,
    loaded: LoadedComparison,
    settings: SessionSettings,
}

fn select(store: &Store, s: &Selection) -> Result<Selected, CliError> {
    match &s.session {
        Some(name) => {
            let session = store.find_session(name)?;
            let mut settings = session.settings.clone();
            if s.by_config {
                settings.grouping = Grouping::Configurations;
            }
            let baseline = s.baseline.or(session.baseline_run_id);
            let loaded = store.load_comparison(&session.run_ids, settings.grouping, baseline)?;
            Ok(Selected {
                title: session.name,
                loaded,
                settings,
            })
        }
        None => {
            let ids = parse_ids(&s.ids)?;
            let grouping = if s.by_config {
                Grouping::Configurations
            } else {
                Grouping::Runs
            };
            let loaded = store.load_comparison(&ids, grouping, s.baseline)?;
            Ok(Selected {
                title: format!(
                    "runs {}",
                    ids.iter()
                        .map(|i| format!("#{i}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                loaded,
                settings: SessionSettings {
                    grouping,
                    ..SessionSettings::default()
                },
            })
        }
    }
}

fn session_json(s: &trainbench_core::session::SavedSession) -> serde_json::Value {
    serde_json::to_value(s).unwrap_or_default()
}

pub fn session(db: &Path, command: SessionCommand, json_out: bool) -> Result<ExitCode, CliError> {
    let mut store = open_store(db)?;
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
            // The comparison must be valid before it is saved.
            store.load_comparison(&ids, settings.grouping, baseline)?;
            let s = store.save_session(&name, &ids, baseline, &settings)?;
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
        SessionCommand::List => {
            let sessions = store.sessions()?;
            if json_out {
                println!("{}", json!({"sessions": sessions}));
            } else if sessions.is_empty() {
                println!("no saved sessions");
            } else {
                for s in sessions {
                    println!(
                        "{:>4}  {:<40} {:>3} runs  {}{}",
                        s.id,
                        s.name,
                        s.run_ids.len(),
                        pdf::utc_text(s.updated_unix_ms),
                        s.imported_from
                            .map(|h| format!("  (imported from {h})"))
                            .unwrap_or_default()
                    );
                }
            }
        }
        SessionCommand::Show { name } => {
            let s = store.find_session(&name)?;
            // A session whose runs were deleted down to one still shows.
            let loaded =
                match store.load_comparison(&s.run_ids, s.settings.grouping, s.baseline_run_id) {
                    Ok(l) => Some(l),
                    Err(StoreError::Compare(CompareError::TooFew { .. })) => None,
                    Err(e) => return Err(e.into()),
                };
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
            let id = store.find_session(&name)?.id;
            let s = store.rename_session(id, &new_name)?;
            if json_out {
                println!("{}", session_json(&s));
            } else {
                println!("renamed session {id} to {:?}", s.name);
            }
        }
        SessionCommand::Delete { name } => {
            let s = store.find_session(&name)?;
            store.delete_session(s.id)?;
            if json_out {
                println!("{}", json!({"deleted": s.id}));
            } else {
                println!("deleted session {:?} (its runs stay)", s.name);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn export(db: &Path, command: ExportCommand) -> Result<ExitCode, CliError> {
    let store = open_store(db)?;
    match command {
        ExportCommand::Pdf {
            selection,
            output,
            title,
        } => {
            let started = std::time::Instant::now();
            let sel = select(&store, &selection)?;
            let bytes = pdf::report(&pdf::ReportInput {
                title: title.unwrap_or(sel.title),
                comparison: &sel.loaded.comparison,
                runs: &sel.loaded.runs,
                charts: &sel.settings.charts,
                hidden_series: &sel.settings.hidden_series,
                prices: &sel.loaded.prices,
                generated_unix_ms: now_unix_ms(),
                studio_version: VERSION,
                extra: &[],
            })
            .map_err(|e| CliError::Failed(e.to_string()))?;
            write_atomic(&output, &bytes)?;
            eprintln!(
                "wrote {} ({} bytes, {} runs) in {:.0} ms",
                output.display(),
                bytes.len(),
                sel.loaded.runs.len(),
                started.elapsed().as_secs_f64() * 1000.0
            );
        }
        ExportCommand::Csv {
            ids,
            session,
            raw,
            run,
            output,
        } => {
            let mut bytes = Vec::new();
            match (raw, run) {
                (Some(raw), Some(run)) => {
                    let what = csv::Raw::parse(&raw).map_err(|e| bad("raw", e.to_string()))?;
                    let detail = store.run_detail(run)?;
                    let telemetry = store.telemetry(run)?;
                    csv::raw(&detail, &telemetry, what, &mut bytes)
                        .map_err(|e| CliError::Failed(e.to_string()))?;
                }
                (None, Some(_)) => {
                    return Err(bad(
                        "run",
                        "run is only used with --raw windows|evals|telemetry".into(),
                    ))
                }
                _ => {
                    let rows = match (session, ids.is_empty()) {
                        (Some(name), _) => {
                            let s = store.find_session(&name)?;
                            s.run_ids
                                .iter()
                                .map(|id| store.run_row(*id))
                                .collect::<Result<Vec<_>, _>>()?
                        }
                        (None, true) => store.list_runs()?,
                        (None, false) => parse_ids(&ids)?
                            .into_iter()
                            .map(|id| store.run_row(id))
                            .collect::<Result<Vec<_>, _>>()?,
                    };
                    csv::runs(&rows, &mut bytes).map_err(|e| CliError::Failed(e.to_string()))?;
                }
            }
            match output {
                Some(path) => write_atomic(&path, &bytes)?,
                None => {
                    use std::io::Write;
                    std::io::stdout()
                        .write_all(&bytes)
                        .map_err(|e| CliError::Failed(format!("standard output: {e}")))?;
                }
            }
        }
        ExportCommand::Chart {
            kind,
            selection,
            output,
        } => {
            let kind = parse_charts(std::slice::from_ref(&kind))?[0];
            let sel = select(&store, &selection)?;
            let data = charts::ChartData {
                comparison: &sel.loaded.comparison,
                runs: &sel.loaded.runs,
                hidden: &sel.settings.hidden_series,
            };
            let ext = output
                .extension()
                .map(|e| e.to_string_lossy().to_lowercase())
                .unwrap_or_default();
            let bytes = match ext.as_str() {
                "svg" => charts::svg(&data, kind).map(String::into_bytes),
                "png" => charts::png(&data, kind, 2),
                _ => {
                    return Err(bad(
                        "output",
                        format!(
                            "output = {} is not allowed: expected a file ending in .svg or .png",
                            output.display()
                        ),
                    ))
                }
            }
            .map_err(|e| CliError::Failed(e.to_string()))?;
            write_atomic(&output, &bytes)?;
            eprintln!("wrote {}", output.display());
        }
        ExportCommand::Session { name, output } => {
            let s = store.find_session(&name)?;
            let file = store.export_session(s.id, &format!("TrainBench Studio {VERSION}"))?;
            let bytes = serde_json::to_vec_pretty(&file)
                .map_err(|e| CliError::Failed(format!("session file: {e}")))?;
            write_atomic(&output, &bytes)?;
            eprintln!(
                "wrote {} ({} runs, {} bytes)",
                output.display(),
                file.runs.len(),
                bytes.len()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn import(db: &Path, file: &Path, json_out: bool) -> Result<ExitCode, CliError> {
    let size = std::fs::metadata(file)
        .map_err(|e| {
            bad(
                "file",
                format!("file = {} is not allowed: {e}", file.display()),
            )
        })?
        .len();
    if size > MAX_SESSION_FILE_BYTES as u64 {
        return Err(bad(
            "file",
            format!(
                "file = {} is not allowed: {size} bytes, at most {MAX_SESSION_FILE_BYTES}",
                file.display()
            ),
        ));
    }
    let bytes = std::fs::read(file).map_err(|e| {
        bad(
            "file",
            format!("file = {} is not allowed: {e}", file.display()),
        )
    })?;
    let parsed =
        SessionFile::parse(&bytes).map_err(|e| bad("file", format!("{}: {e}", file.display())))?;
    let mut store = open_store(db)?;
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
    let outcome = store.import_session(&parsed, name.as_deref())?;
    if json_out {
        println!("{}", serde_json::to_value(&outcome).unwrap_or_default());
    } else if outcome.session_created {
        println!(
            "imported session {:?} (id {}) from {}: {} runs new, {} already here",
            outcome.session_name,
            outcome.session_id,
            parsed.machine.hostname,
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

pub fn delete(db: &Path, ids: &[String], yes: bool) -> Result<ExitCode, CliError> {
    let ids = parse_ids(ids)?;
    let mut store = open_store(db)?;
    if !yes {
        for id in &ids {
            store.run_row(*id)?;
        }
        return Err(bad(
            "yes",
            format!(
                "deleting {} run(s) removes them and all their data: add --yes to confirm",
                ids.len()
            ),
        ));
    }
    let n = store.delete_runs(&ids)?;
    println!("deleted {n} run(s)");
    Ok(ExitCode::SUCCESS)
}
