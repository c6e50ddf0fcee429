//! `trainbench kit build -o DIR`: a self-contained folder that measures on a
//! machine where the studio is not installed but a framework is — this CLI
//! (no libtorch linked; stripped), the Python workers, `run.sh` (registers the
//! machine's Python, runs a suite, leaves a session file) and, when it can
//! start here, the libtorch workers (one per libtorch release: the studio's
//! 2.13 and the GPU machines' 2.11), each in `bin/tch-X.Y.Z/`, of which
//! `run.sh` uses the one that matches the machine's torch. See `docs/kit.md`.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::Subcommand;
use serde_json::json;

use crate::error::{bad, CliError};

const RUN_SH: &str = include_str!("../kit/run.sh");

/// Newest glibc symbol version a kit binary may need: Ubuntu 22.04's.
pub const MAX_GLIBC: (u32, u32) = (2, 35);

#[derive(Subcommand, Debug)]
pub enum KitCommand {
    /// Write the kit folder.
    Build {
        /// The folder to write (created; must be empty if it exists).
        #[arg(short, long)]
        output: PathBuf,
        /// A libtorch worker to include; repeat for one per libtorch release
        /// (default: `trainbench-worker-tch` beside this binary and the
        /// PyTorch 2.11 build, `../tch-2.11/PROFILE/trainbench-worker-tch`,
        /// each when it starts here).
        #[arg(long, conflicts_with = "no_tch")]
        tch: Vec<PathBuf>,
        /// Leave the libtorch workers out.
        #[arg(long)]
        no_tch: bool,
        /// The record of GPU sessions (docs/gpu-results/) whose results to
        /// carry (`share/trainbench/gpu-results/`): the kit's `gpu-session`
        /// measures what they show unmeasured first.
        #[arg(long)]
        measured: Option<PathBuf>,
        /// Print one JSON document instead of text (errors too, as {"error": {code, field, message}}).
        #[arg(long)]
        json: bool,
    },
}

/// The newest `GLIBC_2.N` version named in an ELF file (its symbol version
/// needs), read from the bytes.
pub fn max_glibc(bytes: &[u8]) -> Option<(u32, u32)> {
    let needle = b"GLIBC_2.";
    let mut best: Option<(u32, u32)> = None;
    let mut i = 0;
    while let Some(pos) = bytes[i..].windows(needle.len()).position(|w| w == needle) {
        let start = i + pos + needle.len();
        let digits: String = bytes[start..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .map(|b| *b as char)
            .collect();
        if let Ok(minor) = digits.parse::<u32>() {
            best = best.max(Some((2, minor)));
        }
        i = start;
    }
    best
}

fn io(what: &str, path: &Path, e: std::io::Error) -> CliError {
    CliError::Failed(format!("{what} {}: {e}", path.display()))
}

/// Copies `from` to `to` and strips its debug information and symbol table
/// when `strip` is there (`--strip-all`: the kit runs
/// on a borrowed machine and must travel in 64 MiB; a debug CLI is 66 MB
/// with its symbols, 42 MB without). The dynamic symbols libtorch is linked
/// through stay.
fn copy_binary(from: &Path, to: &Path) -> Result<bool, CliError> {
    std::fs::copy(from, to).map_err(|e| io("cannot copy", from, e))?;
    let stripped = Command::new("strip")
        .arg("--strip-all")
        .arg(to)
        .status()
        .is_ok_and(|s| s.success());
    Ok(stripped)
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), CliError> {
    std::fs::create_dir_all(to).map_err(|e| io("cannot create", to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| io("cannot read", from, e))? {
        let entry = entry.map_err(|e| io("cannot read", from, e))?;
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "__pycache__" {
                copy_tree(&path, &to.join(&name))?;
            }
        } else if path.extension().is_some_and(|x| x == "py" || x == "json") {
            // The code, and the plan's schema the workers check plans against.
            std::fs::copy(&path, to.join(&name)).map_err(|e| io("cannot copy", &path, e))?;
        }
    }
    Ok(())
}

/// The libtorch workers to take: those named, else the one beside this
/// binary and the PyTorch 2.11 build (`target/tch-2.11/PROFILE/`).
fn tch_candidates(exe: &Path, named: Vec<PathBuf>) -> (Vec<PathBuf>, bool) {
    if !named.is_empty() {
        return (named, true);
    }
    let mut found = vec![exe.with_file_name("trainbench-worker-tch")];
    if let (Some(dir), Some(profile)) = (exe.parent(), exe.parent().and_then(Path::file_name)) {
        if let Some(target) = dir.parent() {
            found.push(
                target
                    .join("tch-2.11")
                    .join(profile)
                    .join("trainbench-worker-tch"),
            );
        }
    }
    (found, false)
}

/// What a default libtorch worker left out of the kit is, and how to build
/// it: the PyTorch 2.11 one is the one the borrowed GPU machines can use.
fn not_built(p: &Path) -> String {
    let for_211 = p.components().any(|c| c.as_os_str() == "tch-2.11");
    let what = if for_211 {
        "the libtorch worker for PyTorch 2.11 (the GPU machines' release) is not built: `make tch-2.11` builds it (or `make kit`, which builds both)"
    } else {
        "the libtorch worker for this machine's PyTorch is not built: `make build-cli` builds it"
    };
    format!("{what}; looked for {}", p.display())
}

/// Copies each libtorch worker that starts here to `bin/tch-X.Y.Z/` (the
/// release of the libtorch it names); the manifest's entries and a line
/// saying what was taken and what was left out, and why.
fn tch_workers(
    exe: &Path,
    named: Vec<PathBuf>,
    no_tch: bool,
    bin: &Path,
) -> Result<(Vec<serde_json::Value>, String), CliError> {
    if no_tch {
        return Ok((Vec::new(), "left out (--no-tch)".to_owned()));
    }
    let (candidates, explicit) = tch_candidates(exe, named);
    let (mut taken, mut notes, mut missing) = (Vec::new(), Vec::new(), Vec::new());
    for p in candidates {
        if !p.is_file() {
            if explicit {
                return Err(bad(
                    "tch",
                    format!("tch = {} is not allowed: no such file", p.display()),
                ));
            }
            missing.push(not_built(&p));
            notes.push(not_built(&p));
            continue;
        }
        // Asked as the studio asks a worker (bounded output, a time limit).
        let Some(version) = trainbench_app::envs::libtorch::worker_libtorch(&p, &[], false) else {
            notes.push(format!(
                "left out: {} --version did not name its libtorch (it did not start, or said no version in time)",
                p.display()
            ));
            continue;
        };
        let release = version.split('+').next().unwrap_or(&version).to_owned();
        let dir = bin.join(format!("tch-{release}"));
        if dir.exists() {
            return Err(bad(
                "tch",
                format!(
                    "tch = {} is not allowed: a worker for libtorch {release} is already in the kit (one per release)",
                    p.display()
                ),
            ));
        }
        std::fs::create_dir_all(&dir).map_err(|e| io("cannot create", &dir, e))?;
        let to = dir.join("trainbench-worker-tch");
        copy_binary(&p, &to)?;
        let bytes = std::fs::metadata(&to).map_or(0, |m| m.len());
        notes.push(format!(
            "libtorch {version} in bin/tch-{release}/ ({:.1} MiB), used where PyTorch {release} is installed",
            bytes as f64 / 1048576.0
        ));
        taken.push(json!({
            "libtorch": version,
            "path": format!("bin/tch-{release}/trainbench-worker-tch"),
            "bytes": bytes,
        }));
    }
    if taken.is_empty() {
        notes.insert(0, "none included".to_owned());
    }
    // Said where it is seen even under --json: the kit is made, but a
    // machine that needs the missing worker will train without it.
    for m in missing {
        eprintln!("trainbench: warning: kit without a libtorch worker: {m}");
    }
    Ok((taken, notes.join("; ")))
}

pub fn run(command: KitCommand) -> Result<ExitCode, CliError> {
    let KitCommand::Build {
        output,
        tch,
        no_tch,
        measured,
        json: json_out,
    } = command;
    if let Some(record) = measured.as_ref().filter(|d| !d.is_dir()) {
        return Err(bad(
            "measured",
            format!(
                "measured = {} is not allowed: expected the record of GPU sessions (a folder, docs/gpu-results)",
                record.display()
            ),
        ));
    }
    if output.exists()
        && std::fs::read_dir(&output)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return Err(bad(
            "output",
            format!(
                "output = {} is not allowed: expected a new or empty folder",
                output.display()
            ),
        ));
    }
    let exe = std::env::current_exe()
        .map_err(|e| CliError::Failed(format!("cannot find this program: {e}")))?;
    let exe_bytes = std::fs::read(&exe).map_err(|e| io("cannot read", &exe, e))?;
    let glibc = max_glibc(&exe_bytes);
    if glibc.is_some_and(|g| g > MAX_GLIBC) {
        let (a, b) = glibc.unwrap_or_default();
        return Err(CliError::Failed(format!(
            "this trainbench binary needs glibc {a}.{b}, newer than Ubuntu 22.04's {}.{}: build it on an older system",
            MAX_GLIBC.0, MAX_GLIBC.1
        )));
    }
    let bin = output.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| io("cannot create", &bin, e))?;
    let stripped = copy_binary(&exe, &bin.join("trainbench"))?;

    let workers_from = trainbench_app::envs::package_dir();
    if !workers_from.join("trainbench_worker/__main__.py").is_file() {
        return Err(CliError::Failed(format!(
            "the Python workers are not at {} (set TRAINBENCH_PYTHON_WORKERS)",
            workers_from.display()
        )));
    }
    // The workers, and the peers a GPU session holds them against.
    for package in ["trainbench_worker", "trainbench_peers"] {
        copy_tree(
            &workers_from.join(package),
            &output.join("share/trainbench/workers/python").join(package),
        )?;
    }
    if let Some(record) = &measured {
        carry_record(record, &output.join("share/trainbench/gpu-results"))?;
    }
    let run_sh = output.join("run.sh");
    std::fs::write(&run_sh, RUN_SH).map_err(|e| io("cannot write", &run_sh, e))?;
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&run_sh, std::fs::Permissions::from_mode(0o755));
    }

    let (tch_workers, tch_note) = tch_workers(&exe, tch, no_tch, &bin)?;
    let bytes = trainbench_app::files::bytes_under(&output);
    let manifest = json!({
        "kit": 1,
        "studio_version": env!("CARGO_PKG_VERSION"),
        "studio_git_revision": trainbench_app::GIT_REVISION,
        "built_unix_ms": trainbench_app::now_unix_ms(),
        "glibc_required": glibc.map(|(a, b)| format!("{a}.{b}")),
        "debug_info_stripped": stripped,
        "tch_worker": tch_note,
        "tch_workers": tch_workers,
        "bytes": bytes,
    });
    let manifest_path = output.join("manifest.json");
    std::fs::write(
        &manifest_path,
        serde_json::to_vec_pretty(&manifest).unwrap_or_default(),
    )
    .map_err(|e| io("cannot write", &manifest_path, e))?;
    if json_out {
        println!("{manifest}");
    } else {
        println!(
            "kit written to {} ({:.1} MiB)",
            output.display(),
            bytes as f64 / 1048576.0
        );
        println!(
            "  bin/trainbench: needs glibc {} or newer{}",
            glibc.map_or("(none named)".into(), |(a, b)| format!("{a}.{b}")),
            if stripped {
                ""
            } else {
                " (not stripped: `strip` was not found)"
            }
        );
        println!("  tch workers: {tch_note}");
        println!("on the target: bash {}/run.sh gpu-check", output.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The sessions' results of the record `from` (docs/gpu-results/), copied
/// into `to`: what a kit's session orders its plan by.
fn carry_record(from: &Path, to: &Path) -> Result<(), CliError> {
    // Every results file read and checked before any is copied.
    trainbench_gpu_session::record::all_results("measured", from)?;
    std::fs::create_dir_all(to).map_err(|e| io("cannot create", to, e))?;
    for stem in trainbench_gpu_session::record::stems("measured", from)? {
        let name = format!("{stem}{}", trainbench_gpu_session::record::RESULTS_SUFFIX);
        let path = from.join(&name);
        if path.is_file() {
            std::fs::copy(&path, to.join(&name)).map_err(|e| io("cannot copy", &path, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A default worker that is not built is named with how to build it.
    #[test]
    fn a_missing_default_worker_says_how_to_build_it() {
        let exe = Path::new("/repo/target/debug/trainbench");
        let (candidates, explicit) = tch_candidates(exe, Vec::new());
        assert!(!explicit);
        let notes: Vec<String> = candidates.iter().map(|p| not_built(p)).collect();
        assert!(notes[0].contains("`make build-cli`"), "{notes:?}");
        assert!(notes[1].contains("PyTorch 2.11"), "{notes:?}");
        assert!(notes[1].contains("`make tch-2.11`"), "{notes:?}");
        assert!(
            notes[1].ends_with("/repo/target/tch-2.11/debug/trainbench-worker-tch"),
            "{notes:?}"
        );
    }

    #[test]
    fn the_newest_glibc_version_is_found_in_the_bytes() {
        let bytes = b"\0GLIBC_2.2.5\0GLIBC_2.34\0GLIBC_2.17\0GLIBC_2.";
        assert_eq!(max_glibc(bytes), Some((2, 34)));
        assert_eq!(max_glibc(b"nothing"), None);
    }
}
