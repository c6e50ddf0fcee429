//! Installing a framework's environment from the CLI: the installer's lines
//! and figures on stderr, Ctrl-C cancelling it (`env install`, and `run` for
//! a release it names that is not installed).

use trainbench_app::{envs, frameworks};

use crate::error::CliError;
use crate::output;

/// The installer's own lines on stderr, and its figures when the step
/// changes.
pub fn installer_lines() -> impl FnMut(envs::InstallUpdate<'_>) {
    let mut last_shown = String::new();
    move |u| {
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
    }
}

/// Runs `work` (installs through the `Installs` it is given) on a blocking
/// thread while Ctrl-C cancels every install under way: the installer runs
/// in its own process group, so the terminal's interrupt reaches only this
/// process, which then stops the installer and removes what it had made.
pub fn with_ctrl_c<T: Send + 'static>(
    work: impl FnOnce(&frameworks::Installs) -> trainbench_app::AppResult<T> + Send + 'static,
) -> Result<T, CliError> {
    let installs = std::sync::Arc::new(frameworks::Installs::default());
    let runtime = trainbench_app::execute::runtime()?;
    let result = runtime.block_on(async {
        let worker = {
            let installs = std::sync::Arc::clone(&installs);
            tokio::task::spawn_blocking(move || work(&installs))
        };
        tokio::pin!(worker);
        tokio::select! {
            done = &mut worker => done,
            _ = tokio::signal::ctrl_c() => {
                eprintln!("\ntrainbench: cancelling the install (Ctrl-C)");
                let _ = installs.cancel_all();
                worker.await
            }
        }
    });
    Ok(result.map_err(|e| CliError::Failed(e.to_string()))??)
}

/// Installs `framework` (a framework or a release) while Ctrl-C cancels it.
pub fn install_with_ctrl_c(framework: &str, with_gpu: bool) -> Result<envs::Installed, CliError> {
    let name = framework.to_owned();
    with_ctrl_c(move |installs| installs.install(&name, with_gpu, installer_lines()))
}

/// Every release `frameworks` names that is not installed, made before a
/// sweep is planned (`releases::install_missing`, as the desktop's Start),
/// each said on stderr before and after; releases over the disk budget
/// removed after, each said.
pub fn install_missing(frameworks: &[String], gpu: bool) -> Result<(), CliError> {
    let named = frameworks.to_vec();
    let (made, evicted) = with_ctrl_c(move |installs| {
        let mut lines = installer_lines();
        trainbench_app::releases::install_missing(
            installs,
            &named,
            gpu,
            |pin| say_making(pin, gpu),
            |_, u| lines(u),
        )
    })?;
    for m in &made {
        say_ready(m.pin, &m.installed, m.bytes);
    }
    say_evicted(&evicted);
    Ok(())
}

fn say_making(pin: trainbench_app::versions::Pin, gpu: bool) {
    eprintln!(
        "trainbench: {pin} is not installed here: making its environment ({} build, PyPI)",
        if gpu { "CUDA" } else { "CPU" }
    );
}

fn say_ready(pin: trainbench_app::versions::Pin, made: &envs::Installed, bytes: Option<u64>) {
    if made.found_ready {
        eprintln!(
            "trainbench: {pin} ready (another install made it; {} on disk)",
            bytes.map_or_else(|| "?".into(), output::bytes)
        );
        return;
    }
    eprintln!(
        "trainbench: {pin} ready ({} packages, {} on disk, {:.0} s)",
        made.progress.packages_installed,
        bytes.map_or_else(|| "?".into(), output::bytes),
        made.progress.elapsed_s
    );
}

fn say_evicted(evicted: &envs::pinned::Eviction) {
    let pass = trainbench_app::releases::BudgetPass::from(evicted);
    for r in &pass.removed {
        eprintln!("trainbench: {} (`trainbench env budget`)", r.words);
    }
    for r in &pass.kept {
        eprintln!("trainbench: {}", r.words);
    }
}

/// A release's environment made because a command needs it (`run`,
/// `bisect`): said on stderr before and after (packages, its disk, seconds).
/// Returns what the installer reported and the bytes on disk.
pub fn install_release(
    pin: trainbench_app::versions::Pin,
    gpu: bool,
) -> Result<(envs::Installed, Option<u64>), CliError> {
    say_making(pin, gpu);
    let made = install_with_ctrl_c(&pin.to_string(), gpu)?;
    let bytes = envs::pinned::bytes_of(pin);
    say_ready(pin, &made, bytes);
    Ok((made, bytes))
}

/// After an install: the least recently used releases over the disk budget
/// removed (never one of `keep`), each said on stderr.
pub fn evict(keep: &[trainbench_app::versions::Pin]) {
    say_evicted(&envs::pinned::evict_over_budget(keep));
}
