//! The desktop app given a database it cannot use (damaged, from a newer
//! studio, another program's): it opens anyway, on an empty database in
//! memory, says why, refuses to start runs, leaves the file as it was, and
//! takes another file when one is chosen.

mod common;

use std::path::PathBuf;

use trainbench_studio::settings::Settings;
use trainbench_studio::Studio;

fn scratch(name: &str) -> PathBuf {
    common::scratch(&format!("database-{name}"))
}

#[test]
fn a_damaged_database_opens_the_app_with_the_reason_and_another_file_can_be_chosen() {
    std::env::set_var("TRAINBENCH_NO_NVML", "1");
    let dir = scratch("damaged");
    let damaged = dir.join("damaged.sqlite");
    let bytes = vec![0x42_u8; 16384];
    std::fs::write(&damaged, &bytes).expect("damaged file");
    let studio =
        Studio::new(Settings::at(&damaged, &dir.join("studio.json"))).expect("the app opens");
    let problem = studio.database_problem().expect("a problem is reported");
    assert!(problem.contains("not a TrainBench database"), "{problem}");
    assert!(problem.contains("choose another file"), "{problem}");
    // The app works on an empty database meanwhile.
    assert!(studio
        .with(|w| w.runs())
        .expect("runs of the empty database")
        .is_empty());
    assert_eq!(std::fs::read(&damaged).expect("read"), bytes, "untouched");

    // Choosing another file clears the problem and saves the choice.
    let fresh = dir.join("fresh.sqlite");
    let settings = studio.set_database(fresh.clone()).expect("another file");
    assert_eq!(settings.database, fresh.display().to_string());
    assert_eq!(studio.database_problem(), None);
    let saved = std::fs::read_to_string(dir.join("studio.json")).expect("settings saved");
    assert!(saved.contains("fresh.sqlite"), "{saved}");
}

/// The `trainbench` CLI built beside this test (target/debug), run with this
/// process's environment: `args`' exit code and JSON output.
fn cli(args: &[&str]) -> (Option<i32>, serde_json::Value, String) {
    let out = std::process::Command::new(common::built_binary("trainbench"))
        .args(args)
        .output()
        .expect("trainbench runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let v = serde_json::from_str(&stdout).unwrap_or(serde_json::Value::Null);
    let said = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    (out.status.code(), v, said)
}

fn run_ids(v: &serde_json::Value) -> Vec<i64> {
    v["runs"]
        .as_array()
        .map(|a| a.iter().filter_map(|r| r["id"].as_i64()).collect())
        .unwrap_or_default()
}

#[test]
fn the_cli_uses_the_database_chosen_in_the_apps_settings() {
    // One environment for the app (this process) and the CLI (its child):
    // a studio home and a settings folder of their own.
    common::app::setup_env();
    let dir = scratch("shared-settings");
    let home = dir.join("home");
    std::env::set_var("TRAINBENCH_HOME", &home);
    std::env::set_var("TRAINBENCH_CONFIG_DIR", dir.join("config"));
    std::env::remove_var("TRAINBENCH_DB");

    // Nothing chosen: both use trainbench.sqlite in the studio's home.
    let studio = Studio::new(Settings::load()).expect("the app opens");
    let settings = studio.settings();
    let default = home.join("trainbench.sqlite");
    assert_eq!(settings.database, default.display().to_string());
    assert_eq!(
        settings.database_source,
        trainbench_studio::settings::DatabaseSource::Default
    );
    let (code, v, said) = cli(&["runs", "--json"]);
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(
        v["database"]["path"],
        default.display().to_string(),
        "{said}"
    );
    assert_eq!(v["database"]["source"], "default", "{said}");

    // A database with a run in it, made by the CLI with --db.
    let chosen = dir.join("chosen.sqlite");
    let db_flag = chosen.display().to_string();
    let (code, _, said) = cli(&[
        "--db",
        &db_flag,
        "run",
        "--model",
        "resnet_mini",
        "--steps",
        "4",
        "--batch-size",
        "4",
        "--window-steps",
        "1",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{said}");

    // Chosen in the app's Settings: the CLI, started without --db, reads it.
    let settings = studio.set_database(chosen.clone()).expect("chosen");
    assert_eq!(settings.database, chosen.display().to_string());
    let in_app: Vec<i64> = studio
        .with(|w| w.runs())
        .expect("the app's runs")
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(in_app.len(), 1, "{in_app:?}");
    let (code, v, said) = cli(&["runs", "--json"]);
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(
        v["database"]["path"],
        chosen.display().to_string(),
        "{said}"
    );
    assert_eq!(v["database"]["source"], "settings", "{said}");
    assert_eq!(run_ids(&v), in_app, "{said}");
    let (code, v, said) = cli(&["env", "list", "--json"]);
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(
        v["database"]["path"],
        chosen.display().to_string(),
        "{said}"
    );
    assert_eq!(v["home"], home.display().to_string(), "{said}");

    // A second app started with the same environment opens the same file.
    assert_eq!(Settings::load().database, chosen.display().to_string());
}
