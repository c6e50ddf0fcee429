//! `trainbench env`: the framework environments (list, check, install,
//! register, remove).

use std::process::ExitCode;

use serde_json::json;
use trainbench_app::envs::{self, FrameworkEnv};
use trainbench_app::files::places;
use trainbench_app::settings::DatabaseLocation;
use trainbench_app::{frameworks, Host};

use crate::args::EnvCommand;
use crate::error::{bad, CliError};
use crate::output;

fn env_json(e: &FrameworkEnv) -> serde_json::Value {
    json!({
        "name": e.name,
        "framework": e.framework,
        "selector": if e.builtin { e.framework.to_string() } else { format!("{}@{}", e.framework, e.name) },
        "python": e.python,
        "builtin": e.builtin,
        "ready": e.ready,
        "version": e.version,
    })
}

fn print_table(rows: &[FrameworkEnv]) {
    println!(
        "{:<28} {:<11} {:<10} {:<12} python",
        "use as --framework", "framework", "state", "version"
    );
    // The libtorch worker: present or not, as the wizard sees it.
    if let Some(tch) = frameworks::framework_choices()
        .into_iter()
        .find(|c| c.framework == trainbench_core::Framework::Tch)
    {
        println!(
            "{:<28} {:<11} {:<10} {:<12} {}",
            "tch",
            "libtorch",
            if tch.installed { "built in" } else { "missing" },
            tch.version.as_deref().unwrap_or("-"),
            tch.problem.as_deref().unwrap_or("-")
        );
    }
    for e in rows {
        let selector = if e.builtin {
            e.framework.to_string()
        } else {
            format!("{}@{}", e.framework, e.name)
        };
        let state = if e.ready { "ready" } else { "missing" };
        println!(
            "{selector:<28} {:<11} {state:<10} {:<12} {}",
            e.framework.to_string(),
            e.version.as_deref().unwrap_or("-"),
            e.python.display()
        );
    }
    if rows.iter().any(|e| !e.ready && e.builtin) {
        println!("install a missing one with `trainbench env install FRAMEWORK`");
    }
    let releases = envs::pinned::list_pinned();
    if !releases.is_empty() {
        println!();
        println!(
            "{:<28} {:<10} {:>10}  last used",
            "releases (envs/versions/)", "state", "disk"
        );
        for p in &releases {
            println!(
                "{:<28} {:<10} {:>10}  {}",
                p.pin,
                if p.env.ready { "ready" } else { "incomplete" },
                output::bytes(p.bytes),
                p.last_used_unix_ms
                    .map_or_else(|| "never".into(), |ms| trainbench_app::utc_text(ms as i64))
            );
        }
        let total: u64 = releases.iter().map(|p| p.bytes).sum();
        println!(
            "{} in all; remove one with `trainbench env remove FRAMEWORK==VERSION`",
            output::bytes(total)
        );
    }
}

/// Where the studio keeps things: its home (environments, hosts), the
/// settings file and the database (with why that one).
fn places_json(at: &DatabaseLocation) -> serde_json::Value {
    json!({
        "home": places::studio_home(),
        "settings_file": at.settings_file,
        "database": at,
    })
}

fn print_places(at: &DatabaseLocation) {
    println!("Studio home:   {}", places::studio_home().display());
    println!("Settings file: {}", at.settings_file.display());
    println!("Database:      {}", at.describe());
    println!();
}

pub fn run(
    cmd: Option<EnvCommand>,
    at: &DatabaseLocation,
    json_out: bool,
) -> Result<ExitCode, CliError> {
    match cmd.unwrap_or(EnvCommand::List) {
        EnvCommand::List => {
            let rows = envs::list()?;
            if json_out {
                let mut v = places_json(at);
                v["environments"] = json!(rows.iter().map(env_json).collect::<Vec<_>>());
                v["releases"] = json!(envs::pinned::list_pinned());
                println!("{v}");
            } else {
                print_places(at);
                print_table(&rows);
            }
            Ok(ExitCode::SUCCESS)
        }
        EnvCommand::Check => check(json_out),
        EnvCommand::Budget { size } => budget(size.as_deref(), json_out),
        EnvCommand::Releases { framework } => releases(&framework, json_out),
        EnvCommand::Install {
            framework,
            gpu,
            cpu,
        } => install(&framework, gpu, cpu, json_out),
        EnvCommand::Register {
            name,
            framework,
            python,
        } => {
            let framework = trainbench_core::Framework::parse(&framework)?;
            let e = envs::register(&name, framework, &python)?;
            if json_out {
                println!("{}", env_json(&e));
            } else {
                println!(
                    "registered {name}: use it with --framework {framework}@{name} ({} {})",
                    framework,
                    e.version.as_deref().unwrap_or("version unknown")
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        EnvCommand::Remove { name } => {
            if name.trim().is_empty() {
                return Err(bad(
                    "name",
                    "name = (empty) is not allowed: expected a registered environment".into(),
                ));
            }
            if let Some(pin) = trainbench_core::versions::parse_pin(name.trim())? {
                let freed = envs::pinned::remove_pinned(pin)?;
                if !json_out {
                    println!(
                        "removed {pin}'s environment ({} freed)",
                        output::bytes(freed)
                    );
                }
                return Ok(ExitCode::SUCCESS);
            }
            envs::unregister(&name)?;
            if !json_out {
                println!("forgot {name} (its files are untouched)");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `env budget [SIZE]`: the releases' disk budget, shown or set; setting it
/// lower removes the least recently used releases over it at once.
fn budget(size: Option<&str>, json_out: bool) -> Result<ExitCode, CliError> {
    let mut evicted = envs::pinned::Eviction::default();
    if let Some(text) = size {
        let bytes = trainbench_core::batch_search::parse_memory(text).ok_or_else(|| {
            bad(
                "size",
                format!(
                    "size = {text} is not allowed: expected a size such as 20GiB, 8G or 512MiB"
                ),
            )
        })?;
        envs::pinned::set_budget(bytes)?;
        evicted = envs::pinned::evict_over_budget(&[]);
    }
    let used: u64 = envs::pinned::list_pinned().iter().map(|p| p.bytes).sum();
    let limit = envs::pinned::budget();
    if json_out {
        println!(
            "{}",
            json!({"budget_bytes": limit, "used_bytes": used, "removed": evicted.removed, "in_use": evicted.in_use})
        );
    } else {
        for (pin, bytes) in &evicted.removed {
            println!(
                "removed {pin}'s environment ({}): over the budget",
                output::bytes(*bytes)
            );
        }
        for (pin, bytes) in &evicted.in_use {
            println!(
                "kept {pin}'s environment ({}) over the budget: it is in use (a run, a sweep, a bisection or an install); it is removed when it is free",
                output::bytes(*bytes)
            );
        }
        println!(
            "releases' environments: {} of a {} budget",
            output::bytes(used),
            output::bytes(limit)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `env check`: every environment's worker started and asked what it
/// sees; exit 1 when an installed one does not answer.
fn check(json_out: bool) -> Result<ExitCode, CliError> {
    let mut out = Vec::new();
    let mut broken = false;
    if let Some(row) = check_tch(json_out) {
        broken |= row.get("problem").is_some();
        out.push(row);
    }
    let list = envs::list()?;
    // Every worker started at once (each waits mostly on its framework's
    // import), its line printed in the list's order.
    let results: Vec<Result<serde_json::Value, String>> = std::thread::scope(|scope| {
        let started: Vec<_> = list
            .iter()
            .map(|e| {
                scope.spawn(move || {
                    if e.ready {
                        envs::check(e)
                    } else {
                        Err(format!(
                            "not installed: `trainbench env install {}`",
                            e.framework
                        ))
                    }
                })
            })
            .collect();
        started
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("the check stopped unexpectedly".into()))
            })
            .collect()
    });
    for (e, checked) in list.into_iter().zip(results) {
        broken |= e.ready && checked.is_err();
        if !json_out {
            match &checked {
                Ok(info) => println!(
                    "{:<24} {} {} · python {} · {}",
                    if e.builtin {
                        e.framework.to_string()
                    } else {
                        format!("{}@{}", e.framework, e.name)
                    },
                    e.framework,
                    info["version"].as_str().unwrap_or("?"),
                    info["python"].as_str().unwrap_or("?"),
                    sees(info)
                ),
                Err(why) => println!("{:<24} {}: {why}", e.name, e.framework),
            }
        }
        let mut v = env_json(&e);
        match checked {
            Ok(info) => v["check"] = info,
            Err(why) => v["problem"] = json!(why),
        }
        out.push(v);
    }
    if json_out {
        println!("{}", json!(out));
    }
    Ok(if broken {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// What a worker's `info` says of the GPUs it sees, for `env check`'s lines.
fn sees(info: &serde_json::Value) -> String {
    match info["gpus"].as_array().map_or(0, Vec::len) {
        0 => "sees no GPU (runs on the CPU)".to_owned(),
        n => format!("sees {n} GPU(s): {}", info["gpus"]),
    }
}

/// The libtorch worker's line of `env check` (and its JSON row), when it is
/// built: started with `info`, which loads its libtorch.
fn check_tch(json_out: bool) -> Option<serde_json::Value> {
    let (program, checked) = frameworks::check_tch()?;
    if !json_out {
        match &checked {
            Ok(info) => println!(
                "{:<24} tch {} (libtorch) · worker {program} · {}",
                "tch",
                info["version"].as_str().unwrap_or("?"),
                sees(info)
            ),
            Err(why) => println!("{:<24} tch: {why}", "tch"),
        }
    }
    let mut v = json!({
        "name": "tch", "framework": "tch", "selector": "tch", "worker": program,
        "builtin": true, "ready": true,
    });
    match checked {
        Ok(info) => {
            v["version"] = info["version"].clone();
            v["check"] = info;
        }
        Err(why) => v["problem"] = json!(why),
    }
    Some(v)
}

/// `env install`: the framework's environment made from PyPI (the CUDA
/// build when this machine has a GPU, unless told).
fn install(framework: &str, gpu: bool, cpu: bool, json_out: bool) -> Result<ExitCode, CliError> {
    // A release (`jax==0.7.2`) is checked against the supported range first.
    trainbench_core::versions::parse_pin(framework)?;
    let with_gpu = if gpu || cpu {
        gpu
    } else {
        Host::open().gpu_count() > 0
    };
    eprintln!(
        "trainbench: installing {framework} ({} build) from PyPI; the installer's output (uv, else pip) follows",
        if with_gpu { "CUDA" } else { "CPU" }
    );
    let installed = crate::install::install_with_ctrl_c(framework, with_gpu)?;
    if let Some(pin) = trainbench_core::versions::parse_pin(framework)? {
        crate::install::evict(&[pin]);
    }
    let (e, checked, p) = (&installed.env, &installed.info, &installed.progress);
    if json_out {
        let mut v = env_json(e);
        v["check"] = checked.clone();
        v["install"] = serde_json::json!({
            "seconds": p.elapsed_s,
            "packages": p.packages_installed,
            "downloaded_bytes": p.bytes_done,
            "found_ready": installed.found_ready,
        });
        println!("{v}");
    } else if installed.found_ready {
        println!(
            "{framework} {} ready in {} (another install made it)",
            checked["version"].as_str().unwrap_or("?"),
            e.python.display(),
        );
    } else {
        println!(
            "{framework} {} ready in {} ({} packages installed, {} downloaded, {:.0} s)",
            checked["version"].as_str().unwrap_or("?"),
            e.python.display(),
            p.packages_installed,
            output::bytes(p.bytes_done),
            p.elapsed_s
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `env releases FRAMEWORK`: what the registry lists, newest first.
fn releases(framework: &str, json_out: bool) -> Result<ExitCode, CliError> {
    let (list, range) = trainbench_app::releases::releases(framework)?;
    if json_out {
        println!(
            "{}",
            json!({"framework": framework, "supported": range, "releases": list})
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("{framework} releases on PyPI that the studio supports ({range}), newest first:");
    for r in &list {
        let here = match (r.installed, r.studio_own) {
            (true, true) => "installed (the studio's own environment)",
            (true, false) => "installed",
            (false, _) => "",
        };
        println!("{}", format!("  {:<24} {here}", r.key).trim_end());
    }
    Ok(ExitCode::SUCCESS)
}
