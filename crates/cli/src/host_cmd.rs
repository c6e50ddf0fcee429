//! `trainbench host`, `attach` and the hidden `agent`: remote hosts over SSH
//! through the app layer (`trainbench_app::remote`).

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use serde_json::json;
use trainbench_app::execute;
use trainbench_app::remote::{self, RemoteHost};
use trainbench_app::Host;
use trainbench_core::text::escape_controls;

use crate::args::{AgentCommand, HostCommand};
use crate::error::CliError;
use crate::open::open_workspace;
use crate::output::Bar;

fn host_json(h: &RemoteHost) -> serde_json::Value {
    json!({
        "name": h.name,
        "url": h.url.to_string(),
        "pythons": h.pythons,
        "inventory": h.inventory,
    })
}

fn print_host(h: &RemoteHost) {
    // What a host reported is shown as text, never as terminal commands.
    let e = |s: &str| escape_controls(s).into_owned();
    println!("{}  {}", h.name, h.url);
    match &h.inventory {
        None => println!("  not checked: `trainbench host check {}`", h.name),
        Some(i) => {
            println!(
                "  {} · {} CPU cores · {} · kit {} in {}",
                e(&i.hostname),
                i.cpu_cores,
                if i.gpus.is_empty() {
                    "no GPU".to_owned()
                } else {
                    format!("{} GPU(s): {}", i.gpus.len(), e(&i.gpus.join(", ")))
                },
                e(&i.kit_version),
                e(&i.kit_dir)
            );
            for f in &i.frameworks {
                println!("  {} {} ({})", f.framework, e(&f.version), e(&f.python));
            }
            for (p, kit) in h.peers.iter().zip(&i.peer_kits) {
                println!("  peer {p} (kit in {})", e(kit));
            }
            if let Some(s) = &i.cluster {
                println!(
                    "  {} {}: {} node(s), {} CPUs and {} GPU(s) per node",
                    e(&s.scheduler),
                    e(&s.version),
                    s.nodes,
                    s.cpus_per_node,
                    s.gpus_per_node
                );
            }
            for l in &i.left_out {
                println!("  left out: {}", e(l));
            }
        }
    }
}

pub fn host(command: Option<HostCommand>, json_out: bool) -> Result<ExitCode, CliError> {
    let list = |hosts: Vec<RemoteHost>| {
        if json_out {
            println!(
                "{}",
                json!({"hosts": hosts.iter().map(host_json).collect::<Vec<_>>()})
            );
        } else if hosts.is_empty() {
            println!("no remote hosts: add one with `trainbench host add NAME ssh://user@host`");
        } else {
            hosts.iter().for_each(print_host);
        }
    };
    match command.unwrap_or(HostCommand::List) {
        HostCommand::List => list(remote::hosts()?),
        HostCommand::Add {
            name,
            url,
            python,
            env,
            slurm,
            partition,
            peer,
        } => {
            let slurm = slurm.then_some(remote::SlurmSettings { partition });
            let mut say = |step: &str| eprintln!("host {name}: {step}");
            list(vec![remote::add_host(
                &name, &url, &python, &env, slurm, &peer, &mut say,
            )?])
        }
        HostCommand::Check { name } => {
            let mut say = |step: &str| eprintln!("host {name}: {step}");
            list(vec![remote::check_host(&name, &mut say)?])
        }
        HostCommand::Remove { name } => {
            remote::remove_host(&name)?;
            if json_out {
                println!("{}", json!({"removed": name}));
            } else {
                println!("removed host {name}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Follows a remote run to its end; Ctrl-C cancels it on the host.
pub fn attach(db: &Path, id: i64, json_out: bool) -> Result<ExitCode, CliError> {
    let local = Host::open();
    let mut ws = open_workspace(db)?;
    let runtime = execute::runtime()?;
    let cancel_rx = crate::ctrl_c::switch(&runtime, "trainbench: cancelling on the host (Ctrl-C)");
    let interactive = std::io::stderr().is_terminal() && !json_out;
    let finished = runtime.block_on(async {
        let mut bar = Bar::new(interactive, format!("run #{id} (attached)"));
        let f = remote::attach(&mut ws, &local, id, &mut bar, cancel_rx).await;
        bar.finish();
        f
    })?;
    let row = ws.run(finished.run_id)?;
    if json_out {
        println!("{}", json!({"runs": [crate::output::run_json(&row)]}));
    } else {
        crate::output::print_runs_table(&[row]);
    }
    Ok(ExitCode::SUCCESS)
}

/// Stops waiting for a remote run whose host is gone (`attach --abandon`).
pub fn abandon(db: &Path, id: i64, json_out: bool) -> Result<ExitCode, CliError> {
    let mut ws = open_workspace(db)?;
    remote::abandon(&mut ws, id)?;
    let row = ws.run(id)?;
    if json_out {
        println!("{}", json!({"runs": [crate::output::run_json(&row)]}));
    } else {
        crate::output::print_runs_table(&[row]);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn agent(command: AgentCommand) -> Result<ExitCode, CliError> {
    match command {
        AgentCommand::Run { dir, echo_journal } => {
            let runtime = execute::runtime()?;
            runtime.block_on(remote::agent_run(&dir, echo_journal))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
