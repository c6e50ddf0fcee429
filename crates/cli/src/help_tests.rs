//! The CLI says what it takes: every `run` flag has help with its default,
//! every printing command takes `--json`, and docs/cli.md names every
//! command and flag there is.

use clap::CommandFactory;

use crate::args::Cli;

/// `run`'s flags that are switches or actions, which have no default value.
const NO_DEFAULT: &[&str] = &["no_stop_at_target", "print_plan", "json", "config"];

fn subcommand<'a>(cmd: &'a clap::Command, name: &str) -> &'a clap::Command {
    cmd.get_subcommands()
        .find(|c| c.get_name() == name)
        .unwrap_or_else(|| panic!("no subcommand {name}"))
}

#[test]
fn every_run_flag_has_help_with_its_default() {
    let cli = Cli::command();
    let run = subcommand(&cli, "run");
    let mut missing = Vec::new();
    for arg in run.get_arguments().filter(|a| a.get_long().is_some()) {
        let id = arg.get_id().as_str();
        if matches!(id, "db" | "help") {
            continue;
        }
        let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
        if help.trim().is_empty() {
            missing.push(format!("--{}: no help", arg.get_long().unwrap_or(id)));
        } else if !NO_DEFAULT.contains(&id) && !help.contains("Default:") {
            missing.push(format!(
                "--{}: help names no default: {help}",
                arg.get_long().unwrap_or(id)
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// Every leaf command and whether it (or a parent) takes `--json`.
fn leaves(cmd: &clap::Command, path: String, json_above: bool, out: &mut Vec<(String, bool)>) {
    let json_here = json_above || cmd.get_arguments().any(|a| a.get_id() == "json");
    let subs: Vec<_> = cmd
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .collect();
    if subs.is_empty() {
        out.push((path.clone(), json_here));
    }
    for sub in subs {
        leaves(
            sub,
            format!("{path} {}", sub.get_name()).trim().to_owned(),
            json_here,
            out,
        );
    }
}

#[test]
fn every_command_takes_json() {
    let mut all = Vec::new();
    leaves(&Cli::command(), String::new(), false, &mut all);
    let without: Vec<_> = all
        .iter()
        // `mcp` speaks JSON-RPC on stdout: every answer is JSON already.
        .filter(|(path, json)| !json && path != "mcp")
        .map(|(p, _)| p.as_str())
        .collect();
    assert!(without.is_empty(), "commands without --json: {without:?}");
    assert!(all.len() > 20, "{all:?}");
}

/// Every long flag of `cmd` and its subcommands, with its short form.
fn flags(cmd: &clap::Command, out: &mut Vec<(String, String, Option<String>)>) {
    for arg in cmd.get_arguments() {
        if let Some(long) = arg.get_long().filter(|l| *l != "help" && *l != "version") {
            let short = arg.get_short().map(|c| format!("-{c} "));
            out.push((cmd.get_name().to_owned(), format!("--{long}"), short));
        }
    }
    for sub in cmd.get_subcommands().filter(|c| !c.is_hide_set()) {
        flags(sub, out);
    }
}

#[test]
fn docs_cli_md_names_every_command_and_flag() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cli.md"))
        .expect("docs/cli.md");
    let cli = Cli::command();
    let mut missing = Vec::new();
    for sub in cli
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
    {
        if !doc.contains(&format!("trainbench {}", sub.get_name())) {
            missing.push(format!("the command `trainbench {}`", sub.get_name()));
        }
    }
    let mut all = Vec::new();
    flags(&cli, &mut all);
    for (cmd, flag, short) in all {
        if !doc.contains(&flag) && !short.is_some_and(|s| doc.contains(&s)) {
            missing.push(format!("{flag} (of {cmd})"));
        }
    }
    assert!(
        missing.is_empty(),
        "docs/cli.md does not mention:\n{}",
        missing.join("\n")
    );
}

/// Every command's about line and every argument's help line that is empty,
/// as `trainbench CMD …: WHAT`, walking the whole tree (hidden commands too).
fn empty_help(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
    if !path.is_empty()
        && cmd
            .get_about()
            .is_none_or(|a| a.to_string().trim().is_empty())
    {
        out.push(format!("`{path}`: the command has no description"));
    }
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if matches!(id, "help" | "version") {
            continue;
        }
        let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
        if help.trim().is_empty() {
            let name = match arg.get_long() {
                Some(long) => format!("--{long}"),
                None => format!("<{}>", id.to_uppercase()),
            };
            out.push(format!("`{path}` {name}: no help line"));
        }
    }
    for sub in cmd.get_subcommands().filter(|c| c.get_name() != "help") {
        let sub_path = format!("{path} {}", sub.get_name()).trim().to_owned();
        empty_help(sub, &sub_path, out);
    }
}

#[test]
fn every_command_and_argument_has_a_help_line() {
    let mut cli = Cli::command();
    cli.build();
    let mut empty = Vec::new();
    empty_help(&cli, "", &mut empty);
    assert!(
        empty.is_empty(),
        "{} empty help lines:\n{}",
        empty.len(),
        empty.join("\n")
    );
}

/// Arguments whose default is said twice: in the help text ("Default: …")
/// and again by clap ("[default: …]").
fn defaults_said_twice(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
    for arg in cmd.get_arguments() {
        let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
        let in_text = help.to_lowercase().contains("default:");
        let shown = arg.get_action().takes_values() && !arg.is_hide_default_value_set();
        if in_text && shown && !arg.get_default_values().is_empty() {
            out.push(format!("`{path}` --{}: {help}", arg.get_id()));
        }
    }
    for sub in cmd.get_subcommands().filter(|c| c.get_name() != "help") {
        let sub_path = format!("{path} {}", sub.get_name()).trim().to_owned();
        defaults_said_twice(sub, &sub_path, out);
    }
}

#[test]
fn no_default_is_said_twice() {
    let mut cli = Cli::command();
    cli.build();
    let mut twice = Vec::new();
    defaults_said_twice(&cli, "", &mut twice);
    assert!(
        twice.is_empty(),
        "defaults said twice:\n{}",
        twice.join("\n")
    );
}

fn help_of(cmd: &clap::Command, id: &str) -> String {
    cmd.get_arguments()
        .find(|a| a.get_id() == id)
        .and_then(|a| a.get_help())
        .map(ToString::to_string)
        .unwrap_or_else(|| panic!("no help for --{id}"))
}

#[test]
fn bisect_help_says_its_own_defaults() {
    let cli = Cli::command();
    let bisect = subcommand(&cli, "bisect");
    let min = trainbench_app::bisect::MIN_REPEATS;
    let repeats = help_of(bisect, "repeats");
    assert!(repeats.contains(&format!("Default: {min}")), "{repeats}");
    assert!(!repeats.contains("Default: 1"), "{repeats}");
    let framework = help_of(bisect, "framework");
    assert!(
        !framework.contains("Default: tch"),
        "bisect refuses tch: {framework}"
    );
    assert!(framework.contains("jax"), "{framework}");
    // `run` keeps its own.
    let run = subcommand(&cli, "run");
    assert!(help_of(run, "repeats").contains("Default: 1"));
    assert!(help_of(run, "framework").contains("Default: tch"));
}

#[test]
fn tune_help_says_its_own_defaults() {
    let cli = Cli::command();
    let tune = subcommand(&cli, "tune");
    for (id, says) in [
        ("framework", "Default: every installed framework"),
        ("batch_size", "Default: 64 and 32"),
        ("steps", "Default: 40"),
        ("window_steps", "Default: 4"),
        ("repeats", "Default: 3"),
        ("objective", "Default: throughput"),
        ("budget", "Default: 15m"),
    ] {
        let help = help_of(tune, id);
        assert!(help.contains(says), "--{id}: {help}");
    }
    assert!(!help_of(tune, "batch_size").contains("max"));
}

/// A README command line's words after `$T` (double quotes group words;
/// a `#` comment ends the line).
fn readme_words(line: &str) -> Vec<String> {
    let line = line.split("    #").next().unwrap_or(line);
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The README's MNIST example trains as the quick benchmark does (which
/// reaches 95 %): its learning rate, at least its epochs, its target.
#[test]
fn the_readme_mnist_example_trains_as_the_quick_benchmark() {
    use clap::Parser;
    use trainbench_app::first_run::{QUICK_EPOCHS, QUICK_LR, QUICK_TARGET};
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let line = readme
        .lines()
        .find(|l| l.starts_with("$T run --data mnist"))
        .expect("the README's MNIST example");
    let mut words = readme_words(line);
    words[0] = "trainbench".into();
    let cli = Cli::try_parse_from(&words).unwrap_or_else(|e| panic!("{line}: {e}"));
    let crate::args::Command::Run(run) = cli.command else {
        panic!("{line}: not a run")
    };
    let req = crate::run_args::merge_config(&run).unwrap_or_else(|_| panic!("{line}"));
    assert_eq!(req.lr, Some(QUICK_LR), "{line}");
    assert_eq!(req.target_accuracy, Some(QUICK_TARGET), "{line}");
    assert!(req.epochs.is_some_and(|e| e >= QUICK_EPOCHS), "{line}");
    assert_eq!(req.data, "mnist", "{line}");
    assert_eq!(req.model, vec!["resnet_mini".to_owned()], "{line}");
}
