//! Comparisons and the files made of them: what a selection (a saved session,
//! or run ids) compares; PDF, CSV and chart exports; the portable session
//! file out and in. Every file is written whole or not at all.

use std::path::Path;

use serde::Serialize;
use trainbench_core::compare::Grouping;
use trainbench_core::record::RunRow;
use trainbench_core::session::{
    ChartKind, SavedSession, SessionFile, SessionSettings, MAX_SESSION_FILE_BYTES,
};
use trainbench_report::{charts, csv, document, html, pdf, ReportError};
use trainbench_store::{now_unix_ms, ImportOutcome, LoadedComparison};

use crate::error::{AppError, AppResult};
use crate::workspace::{SessionRef, Workspace};
use crate::VERSION;

/// Which runs a comparison holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    Session(SessionRef),
    Runs(Vec<i64>),
}

/// A comparison as a person chose it: the runs (or a saved session) and,
/// optionally, a grouping, baseline and chart settings that override the
/// session's.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    pub source: Source,
    /// `None`: the session's grouping (one entry per run for run ids).
    pub grouping: Option<Grouping>,
    /// `None`: the session's baseline, else the first entry.
    pub baseline: Option<i64>,
    /// `None`: the session's settings (all charts for run ids).
    pub settings: Option<SessionSettings>,
}

impl Selection {
    pub fn runs(ids: Vec<i64>, grouping: Grouping, baseline: Option<i64>) -> Selection {
        Selection {
            source: Source::Runs(ids),
            grouping: Some(grouping),
            baseline,
            settings: None,
        }
    }
}

/// A selection loaded: its title (the session's name, or the run ids), the
/// comparison with its runs and prices, and the settings in effect.
#[derive(Debug, Clone)]
pub struct Selected {
    pub title: String,
    pub loaded: LoadedComparison,
    pub settings: SessionSettings,
}

/// A file written: where and how big.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Written {
    pub path: String,
    pub bytes: u64,
}

/// A session file imported: what the store did, the session as it is now,
/// and the host the runs were measured on.
#[derive(Debug, Clone)]
pub struct Imported {
    pub outcome: ImportOutcome,
    pub session: SavedSession,
    pub from_host: String,
}

/// Writes an export to `path` whole or not at all (a temporary file opened
/// exclusively beside it, fsynced, renamed): a failed export never leaves half
/// a file or harms an old one, and no export replaces a SQLite database or its
/// side files (field `output`). `Workspace::write_export` also protects the
/// open database before it has a header on disk.
pub fn write_file(path: &Path, bytes: &[u8]) -> AppResult<Written> {
    write_guarded(path, bytes, &[])
}

fn write_guarded(path: &Path, bytes: &[u8], protected: &[&Path]) -> AppResult<Written> {
    trainbench_files::refuse_sqlite("output", path, protected)?;
    trainbench_files::write_atomic("output", path, bytes)?;
    Ok(Written {
        path: path.display().to_string(),
        bytes: bytes.len() as u64,
    })
}

/// `charts = NAME` parsed; every chart when none is named.
pub fn parse_charts(names: &[String]) -> AppResult<Vec<ChartKind>> {
    if names.is_empty() {
        return Ok(ChartKind::ALL.to_vec());
    }
    names
        .iter()
        .map(|n| {
            ChartKind::parse(n).ok_or_else(|| {
                AppError::bad_input("charts", n, &ChartKind::ALL.map(ChartKind::key).join(", "))
            })
        })
        .collect()
}

fn runs_title(ids: &[i64]) -> String {
    format!(
        "runs {}",
        ids.iter()
            .map(|i| format!("#{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

impl Workspace {
    /// An export written whole to `path` (see [`write_file`]); refused when
    /// `path` is this workspace's database or one of its side files.
    pub fn write_export(&self, path: &Path, bytes: &[u8]) -> AppResult<Written> {
        write_guarded(path, bytes, &[self.path()])
    }

    /// Loads runs and compares them (see `trainbench_core::compare::compare`).
    pub fn comparison(
        &self,
        run_ids: &[i64],
        grouping: Grouping,
        baseline: Option<i64>,
    ) -> AppResult<LoadedComparison> {
        Ok(self.store.load_comparison(run_ids, grouping, baseline)?)
    }

    /// What a selection compares, with the session's settings unless the
    /// selection overrides them.
    pub fn select(&self, s: &Selection) -> AppResult<Selected> {
        let (title, run_ids, mut settings, baseline) = match &s.source {
            Source::Session(which) => {
                let session = self.session(which)?;
                (
                    session.name,
                    session.run_ids,
                    s.settings.clone().unwrap_or(session.settings),
                    s.baseline.or(session.baseline_run_id),
                )
            }
            Source::Runs(ids) => (
                runs_title(ids),
                ids.clone(),
                s.settings.clone().unwrap_or_default(),
                s.baseline,
            ),
        };
        if let Some(g) = s.grouping {
            settings.grouping = g;
        }
        let loaded = self.comparison(&run_ids, settings.grouping, baseline)?;
        Ok(Selected {
            title,
            loaded,
            settings,
        })
    }

    /// The PDF report of a selection (title: the selection's unless given),
    /// with sections a caller adds after the question.
    pub fn pdf(
        &self,
        sel: &Selected,
        title: Option<String>,
        extra: &[document::Section],
    ) -> AppResult<Vec<u8>> {
        self.with_report(sel, title, extra, pdf::report)
    }

    /// The same report as one self-contained HTML page (interactive charts,
    /// nothing fetched when opened).
    pub fn html(
        &self,
        sel: &Selected,
        title: Option<String>,
        extra: &[document::Section],
    ) -> AppResult<String> {
        self.with_report(sel, title, extra, html::report)
    }

    /// A report of a selection written by `write` (PDF or HTML): the
    /// comparison with the caller's sections, a bisection's or a search's
    /// findings, and the runs placed in context.
    fn with_report<T>(
        &self,
        sel: &Selected,
        title: Option<String>,
        extra: &[document::Section],
        write: impl FnOnce(&document::ReportInput<'_>) -> Result<T, ReportError>,
    ) -> AppResult<T> {
        // Every report places its runs beside the published record, and
        // projects them to an H100, after its own findings.
        let mut context = Vec::new();
        context.extend(crate::published::record_section(&sel.loaded.runs, false));
        context.extend(crate::projection::projection_section(
            self,
            &sel.loaded.runs,
        ));
        // A bisection's finding, after the caller's own sections.
        let mut extra = extra.to_vec();
        extra.extend(crate::bisect::report::sections(self, &sel.loaded.runs)?);
        // A search's verdict, candidates and frontier likewise.
        extra.extend(crate::tune::report::sections(self, &sel.loaded.runs)?);
        Ok(write(&document::ReportInput {
            title: title.unwrap_or_else(|| sel.title.clone()),
            comparison: &sel.loaded.comparison,
            runs: &sel.loaded.runs,
            charts: &sel.settings.charts,
            hidden_series: &sel.settings.hidden_series,
            prices: &sel.loaded.prices,
            generated_unix_ms: now_unix_ms(),
            studio_version: VERSION,
            extra: &extra,
            context: &context,
        })?)
    }

    /// One chart of a selection: SVG or PNG by the file's extension.
    pub fn chart(&self, sel: &Selected, kind: ChartKind, path: &Path) -> AppResult<Vec<u8>> {
        if kind == ChartKind::Scaling && sel.loaded.comparison.scaling.is_empty() {
            return Err(AppError::bad(
                "kind",
                "kind = scaling is not allowed for these runs: a scaling chart needs a device-count sweep \
                 (one configuration run at several device counts, e.g. `trainbench run --devices 1,2`); \
                 these runs differ in other ways, or all ran on the same number of devices",
            ));
        }
        let data = charts::ChartData {
            comparison: &sel.loaded.comparison,
            runs: &sel.loaded.runs,
            hidden: &sel.settings.hidden_series,
        };
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        Ok(match ext.as_str() {
            "svg" => charts::svg(&data, kind).map(String::into_bytes)?,
            "png" => charts::png(&data, kind, 2)?,
            _ => {
                return Err(AppError::bad_input(
                    "output",
                    path.display(),
                    "a file ending in .svg or .png",
                ))
            }
        })
    }

    /// Runs with their configuration and summary columns as CSV.
    pub fn runs_csv(&self, rows: &[RunRow]) -> AppResult<Vec<u8>> {
        let mut bytes = Vec::new();
        csv::runs(rows, &mut bytes)?;
        Ok(bytes)
    }

    /// Every readable run as the CSV of [`Workspace::runs_csv`], written to
    /// `out` a run at a time: a store of any size in the memory of one run.
    pub fn write_runs_csv<W: std::io::Write>(&self, out: W) -> AppResult<()> {
        let mut csv = csv::RunsCsv::new(out)?;
        self.each_run(|r| csv.row(&r).map_err(AppError::from))?;
        Ok(csv.finish()?)
    }

    /// Every readable run's CSV written into `path` a run at a time, whole
    /// or not at all and never over a SQLite file (as
    /// [`Workspace::write_export`] writes).
    pub fn export_runs_csv(&self, path: &Path) -> AppResult<Written> {
        trainbench_files::refuse_sqlite("output", path, &[self.path()])?;
        let bytes =
            trainbench_files::write_atomic_with("output", path, |w| self.write_runs_csv(w))??;
        Ok(Written {
            path: path.display().to_string(),
            bytes,
        })
    }

    /// One run's raw `windows`, `evals` or `telemetry` as CSV.
    pub fn raw_csv(&self, run_id: i64, what: &str) -> AppResult<Vec<u8>> {
        let what = csv::Raw::parse(what).map_err(|e| AppError::bad("raw", e.to_string()))?;
        let detail = self.run_detail(run_id)?;
        let telemetry = self.telemetry(run_id)?;
        let mut bytes = Vec::new();
        csv::raw(&detail, &telemetry, what, &mut bytes)?;
        Ok(bytes)
    }

    /// A saved session with its runs' raw data as one portable file.
    /// `exported_by` defaults to this studio's name and version.
    pub fn export_session(
        &self,
        which: &SessionRef,
        path: &Path,
        exported_by: Option<&str>,
    ) -> AppResult<(Written, SessionFile)> {
        let s = self.session(which)?;
        let by = exported_by.map_or_else(|| format!("TrainBench Studio {VERSION}"), str::to_owned);
        let file = self.store.export_session(s.id, &by)?;
        let bytes = serde_json::to_vec_pretty(&file)
            .map_err(|e| AppError::Internal(format!("session file: {e}")))?;
        Ok((self.write_export(path, &bytes)?, file))
    }

    /// Imports a session file: all of it in one transaction, or nothing.
    /// The file is checked (a regular file, its size, format, every number
    /// and text) before the store sees it.
    pub fn import_session_file(&mut self, path: &Path) -> AppResult<Imported> {
        // A regular file of bounded size only: a pipe, a device, a folder
        // or a kernel file is refused before anything is read.
        let bytes = trainbench_files::read_bounded(
            "file",
            path,
            "a session file",
            MAX_SESSION_FILE_BYTES as u64,
        )?;
        let parsed = SessionFile::parse(&bytes)
            .map_err(|e| AppError::bad("file", format!("file = {}: {e}", path.display())))?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let outcome = self.store.import_session(&parsed, name.as_deref())?;
        let session = self.store.session(outcome.session_id)?;
        Ok(Imported {
            outcome,
            session,
            from_host: parsed.machine.hostname,
        })
    }
}

impl Workspace {
    /// A saved session's comparison; `None` when fewer than two of its
    /// entries are left (runs deleted since), so the session still shows.
    pub fn session_comparison(&self, s: &SavedSession) -> AppResult<Option<LoadedComparison>> {
        match self
            .store
            .load_comparison(&s.run_ids, s.settings.grouping, s.baseline_run_id)
        {
            Ok(l) => Ok(Some(l)),
            Err(trainbench_store::StoreError::Compare(
                trainbench_core::compare::CompareError::TooFew { .. },
            )) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

/// A comparison's curves of one kind (over wall time since training started),
/// exactly as the exported charts draw them.
pub fn chart_curves(loaded: &LoadedComparison, kind: ChartKind) -> Vec<charts::Curve> {
    let data = charts::ChartData {
        comparison: &loaded.comparison,
        runs: &loaded.runs,
        hidden: &[],
    };
    charts::curves(&data, kind)
}

/// One `#rrggbb` colour per entry, the same as in exported charts and PDFs.
pub fn colours(entries: usize) -> Vec<String> {
    (0..entries).map(charts::colour_hex).collect()
}

/// A chart's title, y unit and x unit.
pub fn chart_titles(kind: ChartKind) -> (&'static str, &'static str, &'static str) {
    charts::titles(kind)
}
