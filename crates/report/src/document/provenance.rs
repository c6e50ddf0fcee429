//! Where a report and its runs come from, gathered once from the input: the
//! studio and time that wrote the report, and each run's machine and
//! software. The title line, the Provenance section and the PDF's metadata
//! print from it.

use trainbench_core::record::RunDetail;

use super::text::{str_at, text_of, utc_text};
use super::ReportInput;

/// The report's provenance.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Provenance {
    /// When the report was generated, `YYYY-MM-DD HH:MM UTC`.
    pub generated_at: String,
    /// The version of the studio that wrote the report.
    pub studio_version: String,
    /// Each run's provenance, in the input's run order.
    pub runs: Vec<RunProvenance>,
}

/// The machine and software of one run, from its provenance record and its
/// worker's hello; a value neither recorded reads "not recorded".
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RunProvenance {
    pub run_id: i64,
    /// The host it ran on (for an imported run, the host it was imported from).
    pub host: String,
    /// For an imported run, its id in the database it came from.
    pub imported_run_id: Option<i64>,
    pub cpu_model: String,
    pub cpu_cores: String,
    /// The GPUs' names; empty when there were none.
    pub gpus: Vec<String>,
    /// What the GPU probe found (says why when there are no GPUs).
    pub gpu_probe: String,
    pub nvidia_driver: String,
    pub cuda_driver: String,
    pub os: String,
    pub kernel: String,
    pub framework: String,
    pub framework_version: String,
    /// `name version` of each library the worker reported.
    pub libraries: Vec<String>,
    /// The studio that ran it, and its git revision.
    pub studio_version: String,
    pub studio_git_revision: String,
}

impl Provenance {
    pub(crate) fn of(input: &ReportInput<'_>) -> Provenance {
        Provenance {
            generated_at: utc_text(input.generated_unix_ms),
            studio_version: input.studio_version.to_string(),
            runs: input.runs.iter().map(RunProvenance::of).collect(),
        }
    }
}

impl RunProvenance {
    fn of(r: &RunDetail) -> RunProvenance {
        let p = &r.provenance;
        let at = |key: &str| text_of(str_at(p, &[key]));
        let gpus = str_at(p, &["gpus"])
            .and_then(|g| g.as_array())
            .map(|g| g.iter().map(|x| text_of(x.get("name"))).collect())
            .unwrap_or_default();
        let libraries = str_at(&r.hello, &["libraries"])
            .and_then(|l| l.as_array())
            .map(|l| {
                l.iter()
                    .filter_map(|x| {
                        Some(format!("{} {}", x.get(0)?.as_str()?, x.get(1)?.as_str()?))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let (host, imported_run_id) = match &r.row.origin {
            Some(o) => (o.hostname.clone(), Some(o.source_run_id)),
            None => (at("hostname"), None),
        };
        RunProvenance {
            run_id: r.row.id,
            host,
            imported_run_id,
            cpu_model: at("cpu_model"),
            cpu_cores: at("cpu_cores"),
            gpus,
            gpu_probe: at("gpu_probe"),
            nvidia_driver: at("nvidia_driver"),
            cuda_driver: at("cuda_driver"),
            os: at("os"),
            kernel: at("kernel"),
            framework: r.row.framework.to_string(),
            framework_version: text_of(str_at(&r.hello, &["framework_version"])),
            libraries,
            studio_version: at("studio_version"),
            studio_git_revision: at("studio_git_revision"),
        }
    }
}
