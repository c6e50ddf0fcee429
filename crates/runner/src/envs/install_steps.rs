//! The installer's commands for one environment: uv where there is one
//! (parallel downloads, bytecode compiled at install), else `python3 -m venv`
//! and pip; then the MNIST sample's package alone, without its dependencies.

use std::path::{Path, PathBuf};

use super::home;

/// Where `uv` is: `$TRAINBENCH_UV`, else the one `scripts/setup.sh` installs
/// (`tools/uv` under the studio's data directory), else `uv` on `PATH`; `None`
/// when there is none (pip is used then).
pub fn uv_program() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TRAINBENCH_UV") {
        return Some(PathBuf::from(p));
    }
    let ours = home().join("tools").join("uv").join("bin").join("uv");
    if ours.is_file() {
        return Some(ours);
    }
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("uv"))
            .find(|u| u.is_file())
    })
}

/// One installer command: what it does in words, the program, its arguments.
pub(super) type Step = (&'static str, String, Vec<String>);

/// The commands that build an environment in `dir`.
pub(super) fn steps(dir: &Path, req: &Path) -> Vec<Step> {
    let python = dir.join("bin").join("python").display().to_string();
    let dir = dir.display().to_string();
    let req = req.display().to_string();
    let owned = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    let sample = super::mnist_sample_packages();
    match uv_program() {
        // The environment moves into place when it is complete: relocatable.
        Some(uv) => {
            let uv = uv.display().to_string();
            vec![
                (
                    "creating the environment",
                    uv.clone(),
                    owned(&[
                        "venv",
                        "--quiet",
                        "--relocatable",
                        "--python",
                        "python3",
                        &dir,
                    ]),
                ),
                (
                    "resolving and downloading",
                    uv.clone(),
                    // Bytecode compiled now, as pip does by default: where
                    // Python may not write it (PYTHONDONTWRITEBYTECODE) each
                    // worker start would compile the framework's sources.
                    owned(&[
                        "pip",
                        "install",
                        "--compile-bytecode",
                        "--python",
                        &python,
                        "-r",
                        &req,
                    ]),
                ),
                (
                    "installing the MNIST sample",
                    uv,
                    owned(
                        &[
                            &[
                                "pip",
                                "install",
                                "--compile-bytecode",
                                "--python",
                                &python,
                                "--no-deps",
                            ][..],
                            &sample[..],
                        ]
                        .concat(),
                    ),
                ),
            ]
        }
        // The worker runs as `python -m …` (torchrun too), so a venv that
        // moved keeps working; its console scripts are not used.
        None => vec![
            (
                "creating the environment",
                "python3".into(),
                owned(&["-m", "venv", &dir]),
            ),
            (
                "upgrading pip",
                python.clone(),
                owned(&["-m", "pip", "install", "--upgrade", "pip"]),
            ),
            (
                "resolving and downloading",
                python.clone(),
                owned(&["-m", "pip", "install", "--progress-bar", "off", "-r", &req]),
            ),
            (
                "installing the MNIST sample",
                python,
                owned(
                    &[
                        &["-m", "pip", "install", "--progress-bar", "off", "--no-deps"][..],
                        &sample[..],
                    ]
                    .concat(),
                ),
            ),
        ],
    }
}
