//! `trainbench env`: the framework environments (list, check, install,
//! register, remove).

use std::process::ExitCode;

use serde_json::json;
use trainbench_app::envs::{self, FrameworkEnv};
use trainbench_app::{frameworks, Host};

use crate::args::EnvCommand;
use crate::error::{bad, CliError};

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
    println!(
        "{:<28} {:<11} {:<10} {:<12} -",
        "tch", "libtorch", "built in", "2.13.0"
    );
    for e in rows {
        let selector = if e.builtin {
            e.framework.to_string()
        } else {
            format!("{}@{}", e.framework, e.name)
        };
        let state = if e.ready { "ready" } else { "missing" };
        println!(
            "{selector:<28} {:<11} {state:<10} {:<12} {}",
            e.framework,
            e.version.as_deref().unwrap_or("-"),
            e.python.display()
        );
    }
    if rows.iter().any(|e| !e.ready && e.builtin) {
        println!("install a missing one with `trainbench env install FRAMEWORK`");
    }
}

pub fn run(cmd: Option<EnvCommand>, json_out: bool) -> Result<ExitCode, CliError> {
    match cmd.unwrap_or(EnvCommand::List) {
        EnvCommand::List => {
            let rows = envs::list()?;
            if json_out {
                println!("{}", json!(rows.iter().map(env_json).collect::<Vec<_>>()));
            } else {
                print_table(&rows);
            }
            Ok(ExitCode::SUCCESS)
        }
        EnvCommand::Check => {
            let mut out = Vec::new();
            let mut broken = false;
            for e in envs::list()? {
                let checked = if e.ready {
                    envs::check(&e)
                } else {
                    Err(format!(
                        "not installed: `trainbench env install {}`",
                        e.framework
                    ))
                };
                broken |= e.ready && checked.is_err();
                if !json_out {
                    match &checked {
                        Ok(info) => {
                            let gpus = info["gpus"].as_array().map_or(0, Vec::len);
                            println!(
                                "{:<24} {} {} · python {} · {}",
                                if e.builtin {
                                    e.framework.to_string()
                                } else {
                                    format!("{}@{}", e.framework, e.name)
                                },
                                e.framework,
                                info["version"].as_str().unwrap_or("?"),
                                info["python"].as_str().unwrap_or("?"),
                                if gpus == 0 {
                                    "sees no GPU (runs on the CPU)".to_owned()
                                } else {
                                    format!("sees {gpus} GPU(s): {}", info["gpus"])
                                }
                            );
                        }
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
        EnvCommand::Install {
            framework,
            gpu,
            cpu,
        } => {
            let with_gpu = if gpu || cpu {
                gpu
            } else {
                Host::open().gpu_count() > 0
            };
            eprintln!(
                "trainbench: installing {framework} ({} build) from PyPI; the installer's output (uv, else pip) follows",
                if with_gpu { "CUDA" } else { "CPU" }
            );
            let (e, checked) = frameworks::install(&framework, with_gpu, |line| {
                // Progress for a person: pip's own lines, as they come.
                eprintln!("  {line}");
            })?;
            if json_out {
                let mut v = env_json(&e);
                v["check"] = checked;
                println!("{v}");
            } else {
                println!(
                    "{framework} {} ready in {}",
                    checked["version"].as_str().unwrap_or("?"),
                    e.python.display()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
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
            envs::unregister(&name)?;
            if !json_out {
                println!("forgot {name} (its files are untouched)");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
