//! Installing a framework's environment from the CLI: the installer's lines
//! and figures on stderr, Ctrl-C cancelling it (`env install`, and `run` for
//! a release it names that is not installed).

use trainbench_app::{envs, frameworks};

use crate::error::CliError;
use crate::output;

/// Installs on a blocking thread while Ctrl-C cancels it: the installer runs
/// in its own process group, so the terminal's interrupt reaches only this
/// process, which then stops the installer and removes what it had made.
pub fn install_with_ctrl_c(framework: &str, with_gpu: bool) -> Result<envs::Installed, CliError> {
    let installs = std::sync::Arc::new(frameworks::Installs::default());
    let runtime = trainbench_app::execute::runtime()?;
    let name = framework.to_owned();
    let result = runtime.block_on(async {
        let worker = {
            let installs = std::sync::Arc::clone(&installs);
            tokio::task::spawn_blocking(move || {
                let mut last_shown = String::new();
                installs.install(&name, with_gpu, |u| {
                    // The installer's own lines, and the figures when they change.
                    eprintln!("  {}", u.line);
                    let p = u.progress;
                    if p.step != last_shown {
                        eprintln!(
                            "  [{}: {} of {} packages installed, {} of {} downloaded, {:.0} s]",
                            p.step,
                            p.packages_installed,
                            p.packages_total
                                .map_or_else(|| "?".into(), |n| n.to_string()),
                            output::bytes(p.bytes_done),
                            output::bytes(p.bytes_total),
                            p.elapsed_s
                        );
                        p.step.clone_into(&mut last_shown);
                    }
                })
            })
        };
        tokio::pin!(worker);
        tokio::select! {
            done = &mut worker => done,
            _ = tokio::signal::ctrl_c() => {
                eprintln!("\ntrainbench: cancelling the install (Ctrl-C)");
                let _ = installs.cancel(framework);
                worker.await
            }
        }
    });
    Ok(result.map_err(|e| CliError::Failed(e.to_string()))??)
}

/// A release's environment made because a command needs it (`run`,
/// `bisect`): said on stderr before and after (packages, its disk, seconds).
/// Returns what the installer reported and the bytes on disk.
pub fn install_release(
    pin: trainbench_app::versions::Pin,
    gpu: bool,
) -> Result<(envs::Installed, Option<u64>), CliError> {
    eprintln!(
        "trainbench: {pin} is not installed here: making its environment ({} build, PyPI)",
        if gpu { "CUDA" } else { "CPU" }
    );
    let made = install_with_ctrl_c(&pin.to_string(), gpu)?;
    let bytes = envs::pinned::bytes_of(pin);
    eprintln!(
        "trainbench: {pin} ready ({} packages, {} on disk, {:.0} s)",
        made.progress.packages_installed,
        bytes.map_or_else(|| "?".into(), output::bytes),
        made.progress.elapsed_s
    );
    Ok((made, bytes))
}

/// After an install: the least recently used releases over the disk budget
/// removed (never one of `keep`), each said on stderr.
pub fn evict(keep: &[trainbench_app::versions::Pin]) {
    for (pin, bytes) in envs::pinned::evict_over_budget(keep) {
        eprintln!(
            "trainbench: removed {pin}'s environment ({}, the least recently used): the releases' environments were over their {} budget (`trainbench env budget`)",
            output::bytes(bytes),
            output::bytes(envs::pinned::budget())
        );
    }
}
