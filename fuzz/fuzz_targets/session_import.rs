//! Fuzz target: the session importer. Any bytes go through the same path as
//! `trainbench import FILE` — parse and validate, then import into a database
//! that already holds a run and a session. The importer may refuse, but it
//! must not panic, and a refused import must leave the database exactly as it
//! was (all or nothing).
#![no_main]

use libfuzzer_sys::fuzz_target;
use trainbench_core::session::{SessionFile, SessionSettings};
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::Store;

fn dump(store: &Store, file: &SessionFile) -> String {
    let mut out = String::new();
    // The copies of the file's model files, kept only by an import that
    // checked their hashes and committed.
    for m in &file.model_files {
        let kept = store.model_file(&m.sha256).expect("model file");
        out.push_str(&format!("{:?}", kept.map(|k| (k.sha256, k.bytes))));
    }
    for r in store.list_runs().expect("runs") {
        out.push_str(
            &serde_json::to_string(&store.run_detail(r.id).expect("detail")).expect("json"),
        );
        out.push_str(
            &serde_json::to_string(&store.telemetry(r.id).expect("telemetry")).expect("json"),
        );
    }
    out.push_str(&serde_json::to_string(&store.sessions().expect("sessions")).expect("json"));
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(file) = SessionFile::parse(data) else {
        return;
    };
    let mut store = Store::open_in_memory().expect("store");
    let local = write_run(&mut store, &FixtureRun::default()).expect("local run");
    store
        .save_session("local", &[local], None, &SessionSettings::default())
        .expect("local session");
    let before = dump(&store, &file);
    match store.import_session(&file, Some("fuzz.json")) {
        Ok(first) => {
            // Importing the same file again adds nothing.
            let after = dump(&store, &file);
            let again = store
                .import_session(&file, Some("fuzz.json"))
                .expect("second import");
            assert!(!again.session_created, "the same session was created twice");
            let _ = first;
            assert_eq!(dump(&store, &file), after, "a second import changed the database");
        }
        Err(_) => assert_eq!(
            dump(&store, &file),
            before,
            "a refused import changed the database"
        ),
    }
    assert_eq!(store.integrity_check().expect("check"), "ok");
});
