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
    steps_with(dir, req, uv_program(), bytecode_flag())
}

/// Whether uv is told to compile the environment's Python files to bytecode
/// at install (`--compile-bytecode`), as pip does by default: yes, unless
/// `UV_COMPILE_BYTECODE` is set, which uv then reads itself (`0`: none at
/// install, a faster install; each module is compiled when first imported,
/// where Python may write beside it). Compiling every file of a framework
/// and its dependencies takes about 20 s of CPU for JAX with Flax and Optax.
fn bytecode_flag() -> bool {
    std::env::var_os("UV_COMPILE_BYTECODE").is_none()
}

/// [`steps`] with uv (or none) and the bytecode choice given.
fn steps_with(dir: &Path, req: &Path, uv: Option<PathBuf>, bytecode: bool) -> Vec<Step> {
    let python = dir.join("bin").join("python").display().to_string();
    let dir = dir.display().to_string();
    let req = req.display().to_string();
    let owned = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    let sample = super::mnist_sample_packages();
    let compile: &[&str] = if bytecode {
        &["--compile-bytecode"]
    } else {
        &[]
    };
    match uv {
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
                    owned(
                        &[
                            &["pip", "install"][..],
                            compile,
                            &["--python", &python, "-r", &req],
                        ]
                        .concat(),
                    ),
                ),
                (
                    "installing the MNIST sample",
                    uv,
                    owned(
                        &[
                            &["pip", "install"][..],
                            compile,
                            &["--python", &python, "--no-deps"],
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

#[cfg(test)]
mod tests {
    use super::*;

    fn installs(steps: &[Step]) -> Vec<&Vec<String>> {
        steps
            .iter()
            .filter(|(_, _, args)| args.iter().any(|a| a == "install"))
            .map(|(_, _, args)| args)
            .collect()
    }

    #[test]
    fn uv_compiles_bytecode_at_install_unless_its_own_setting_says() {
        let (dir, req) = (Path::new("/e/jax"), Path::new("/e/jax.txt"));
        let uv = Some(PathBuf::from("/t/uv"));
        let with = steps_with(dir, req, uv.clone(), true);
        let without = steps_with(dir, req, uv, false);
        assert_eq!(installs(&with).len(), 2);
        for args in installs(&with) {
            assert!(args.contains(&"--compile-bytecode".to_owned()), "{args:?}");
        }
        assert_eq!(installs(&without).len(), 2);
        for (a, b) in installs(&without).iter().zip(installs(&with)) {
            let mut expected = b.clone();
            expected.retain(|x| x != "--compile-bytecode");
            assert_eq!(**a, expected);
        }
        // pip compiles by default: nothing to add or take away.
        let pip = steps_with(dir, req, None, false);
        assert_eq!(pip, steps_with(dir, req, None, true));
    }
}
