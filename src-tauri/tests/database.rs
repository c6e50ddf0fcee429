//! The desktop app given a database it cannot use (damaged, from a newer
//! studio, another program's): it opens anyway, on an empty database in
//! memory, says why, refuses to start runs, leaves the file as it was, and
//! takes another file when one is chosen.

mod common;

use std::path::PathBuf;

use trainbench_studio::settings::{Settings, Theme};
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
    let studio = Studio::new(Settings {
        database: damaged.display().to_string(),
        theme: Theme::System,
        file: dir.join("studio.json").display().to_string(),
    })
    .expect("the app opens");
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
