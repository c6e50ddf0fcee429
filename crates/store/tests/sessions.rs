//! Saved sessions and session files against real SQLite files.

use std::path::PathBuf;

use trainbench_core::session::{SessionFile, SessionSettings};
use trainbench_core::summary::RunStatus;
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::{Store, StoreError};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trainbench-store-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Everything in the database that an import could change, as text.
fn dump(store: &Store) -> String {
    let mut out = String::new();
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

fn source_with_session(dir: &std::path::Path) -> (Store, i64, Vec<i64>) {
    let mut store = Store::open(&dir.join("source.sqlite")).expect("open");
    let ids: Vec<i64> = (0..3)
        .map(|i| {
            write_run(
                &mut store,
                &FixtureRun {
                    framework: [
                        trainbench_core::Framework::Tch,
                        trainbench_core::Framework::Pytorch,
                        trainbench_core::Framework::Jax,
                    ][i],
                    samples_per_s: 300.0 + 50.0 * i as f64,
                    seed: i as u64,
                    ..Default::default()
                },
            )
            .expect("fixture")
        })
        .collect();
    let s = store
        .save_session(
            "tch vs python",
            &ids,
            Some(ids[1]),
            &SessionSettings::default(),
        )
        .expect("save");
    (store, s.id, ids)
}

#[test]
fn sessions_save_list_rename_delete_with_named_errors() {
    let dir = scratch("crud");
    let (mut store, id, ids) = source_with_session(&dir);
    let s = store.session(id).expect("session");
    assert_eq!(s.run_ids, ids);
    assert_eq!(s.baseline_run_id, Some(ids[1]));
    let err = store
        .save_session("tch vs python", &ids, None, &SessionSettings::default())
        .expect_err("duplicate name");
    assert!(
        err.to_string()
            .contains("name = \"tch vs python\" is not allowed"),
        "{err}"
    );
    let err = store
        .save_session("other", &ids, Some(999), &SessionSettings::default())
        .expect_err("baseline outside");
    assert!(err.to_string().contains("baseline = \"999\""), "{err}");
    let err = store
        .save_session("other", &[ids[0], 4242], None, &SessionSettings::default())
        .expect_err("missing run");
    assert!(
        matches!(err, StoreError::NotFound { what: "run", .. }),
        "{err}"
    );
    let err = store
        .save_session("  ", &ids, None, &SessionSettings::default())
        .expect_err("blank name");
    assert!(err.to_string().contains("name"), "{err}");
    assert_eq!(
        store.sessions().expect("list").len(),
        1,
        "failed saves left nothing"
    );

    let renamed = store.rename_session(id, "renamed").expect("rename");
    assert_eq!(renamed.name, "renamed");
    assert_eq!(store.find_session("renamed").expect("by name").id, id);
    let updated = store
        .update_session(id, &ids[..2], Some(ids[0]), &SessionSettings::default())
        .expect("update");
    assert_eq!(updated.run_ids, ids[..2]);
    // Deleting a run removes it from the session, not the session.
    store.delete_runs(&[ids[1]]).expect("delete run");
    assert_eq!(store.session(id).expect("session").run_ids, vec![ids[0]]);
    store.delete_session(id).expect("delete");
    assert!(store.sessions().expect("list").is_empty());
    assert_eq!(
        store.list_runs().expect("runs").len(),
        2,
        "runs outlive sessions"
    );
}

#[test]
fn deleting_a_running_run_is_refused_and_deletes_nothing() {
    let dir = scratch("delete");
    let mut store = Store::open(&dir.join("db.sqlite")).expect("open");
    let done = write_run(&mut store, &FixtureRun::default()).expect("fixture");
    let running = write_run(&mut store, &FixtureRun::default()).expect("fixture");
    store
        .finish_run(running, RunStatus::Running, None, None, None, "")
        .expect("mark running");
    let err = store.delete_runs(&[done, running]).expect_err("running");
    assert!(
        err.to_string()
            .contains(&format!("run {running} is running")),
        "{err}"
    );
    assert_eq!(store.list_runs().expect("runs").len(), 2);
}

#[test]
fn export_then_import_into_a_fresh_database_gives_identical_runs_and_summaries() {
    let dir = scratch("roundtrip");
    let (source, id, ids) = source_with_session(&dir);
    let file = source.export_session(id, "test").expect("export");
    let bytes = serde_json::to_vec(&file).expect("write");
    let parsed = SessionFile::parse(&bytes).expect("parse");
    assert!(parsed == file, "the file reads back as written");

    let mut target = Store::open(&dir.join("target.sqlite")).expect("open target");
    let outcome = target
        .import_session(&parsed, Some("session.json"))
        .expect("import");
    assert!(outcome.session_created);
    assert_eq!(
        (outcome.runs_imported, outcome.runs_already_present),
        (3, 0)
    );
    let session = target.session(outcome.session_id).expect("session");
    assert_eq!(session.name, "tch vs python");
    assert!(session.imported_from.is_some());
    for (src, dst) in ids.iter().zip(&session.run_ids) {
        let a = source.run_detail(*src).expect("source run");
        let b = target.run_detail(*dst).expect("imported run");
        assert_eq!(a.row.summary, b.row.summary, "identical summaries");
        assert_eq!(a.windows, b.windows);
        assert_eq!(a.evals, b.evals);
        assert_eq!(a.memory, b.memory);
        assert_eq!(a.provenance, b.provenance);
        assert_eq!(
            source.telemetry(*src).expect("t"),
            target.telemetry(*dst).expect("t")
        );
        let origin = b.row.origin.expect("marked as imported");
        assert_eq!(origin.source_run_id, *src);
        assert_eq!(origin.machine_id, source.machine_id().expect("machine"));
        // The summary recomputed here from the imported raw data is the same.
        let again = trainbench_core::summary::summarize(&target.measurements(*dst).expect("m"));
        assert_eq!(Some(again), a.row.summary);
    }
    let base_idx = ids.iter().position(|x| *x == ids[1]).expect("baseline");
    assert_eq!(session.baseline_run_id, Some(session.run_ids[base_idx]));

    // The same file again: nothing duplicated.
    let before = dump(&target);
    let again = target.import_session(&parsed, None).expect("re-import");
    assert!(!again.session_created);
    assert_eq!((again.runs_imported, again.runs_already_present), (0, 3));
    assert_eq!(dump(&target), before);

    // Exported from the importing machine and imported back where the runs
    // were measured: the runs are recognised as the originals.
    let mut source = source;
    target
        .rename_session(outcome.session_id, "round trip")
        .expect("rename");
    let back = target
        .export_session(outcome.session_id, "test")
        .expect("export back");
    let mut back = back;
    back.session.uid = "0123456789abcdef0123456789abcdef".into();
    let result = source.import_session(&back, None).expect("import back");
    assert_eq!((result.runs_imported, result.runs_already_present), (0, 3));
    assert_eq!(source.list_runs().expect("runs").len(), 3);
}

fn valid_file_json(dir: &std::path::Path) -> serde_json::Value {
    let (source, id, _) = source_with_session(dir);
    serde_json::to_value(source.export_session(id, "test").expect("export")).expect("value")
}

/// Session files that must be refused, each with what the error says:
/// broken JSON, another format, numbers and texts out of bounds, duplicate
/// ids, forged figures, and a run claiming a local run's uid.
fn hostile_files(
    good: &serde_json::Value,
    local_uid: &str,
) -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let text = good.to_string();

    let mut cases: Vec<(&'static str, Vec<u8>, &'static str)> = vec![
        (
            "truncated",
            text.as_bytes()[..text.len() / 2].to_vec(),
            "not valid JSON",
        ),
        ("empty", Vec::new(), "not valid JSON"),
        ("not json", b"PK\x03\x04 zip".to_vec(), "not valid JSON"),
        (
            "another format",
            br#"{"format":"x","version":1}"#.to_vec(),
            "format = \"x\"",
        ),
        (
            "deep nesting",
            format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(),
            "not valid JSON",
        ),
    ];
    cases.extend(edited_files(good, NUMBERS_AND_IDS));
    cases.extend(edited_files(good, TEXTS_AND_SETTINGS));
    cases.extend(edited_files(good, MODEL_FILES));
    let collide = local_uid.to_owned();
    let mut v = good.clone();
    v["runs"][2]["uid"] = collide.into();
    cases.push((
        "uid of a local run",
        v.to_string().into_bytes(),
        "measured on another machine",
    ));
    cases
}

/// An edit of a valid session file, and what the refusal says.
type Edit = (&'static str, fn(&mut serde_json::Value), &'static str);

/// Numbers out of bounds, duplicate ids, forged figures.
const NUMBERS_AND_IDS: &[Edit] = &[
    (
        "wrong version",
        |v| v["version"] = 4.into(),
        "version = 4 is not supported",
    ),
    (
        "huge number",
        |v| v["runs"][0]["windows"][0]["samples"] = serde_json::json!(u64::MAX),
        "runs[0].windows[0].samples",
    ),
    (
        "huge float",
        |v| v["runs"][0]["flops_per_sample"] = serde_json::json!(1e300),
        "runs[0].flops_per_sample",
    ),
    (
        "negative count",
        |v| v["runs"][0]["batch_size"] = serde_json::json!(-1),
        "runs[0].batch_size",
    ),
    (
        "unknown field",
        |v| v["runs"][0]["surprise"] = 1.into(),
        "surprise",
    ),
    (
        "duplicate uid",
        |v| v["runs"][1]["uid"] = v["runs"][0]["uid"].clone(),
        "appears twice",
    ),
    (
        "duplicate id",
        |v| v["runs"][1]["id"] = v["runs"][0]["id"].clone(),
        "appears twice",
    ),
    (
        "no runs",
        |v| v["runs"] = serde_json::json!([]),
        "expected 1 to",
    ),
    (
        "bad uid",
        |v| v["runs"][0]["uid"] = "'; DROP TABLE runs; --".into(),
        "expected 32 hex digits",
    ),
    (
        "forged throughput",
        |v| v["runs"][0]["summary"]["throughput_samples_per_s"] = 1e6.into(),
        "does not match the run's own windows",
    ),
    (
        "running run",
        |v| v["runs"][0]["status"] = "running".into(),
        "only finished runs",
    ),
    (
        "baseline elsewhere",
        |v| v["session"]["baseline_run_uid"] = "ffffffffffffffffffffffffffffffff".into(),
        "not one of the file's runs",
    ),
];

/// Texts too long or with control characters, settings that repeat.
const TEXTS_AND_SETTINGS: &[Edit] = &[
    (
        "control chars in name",
        |v| v["session"]["name"] = "a\u{7}b".into(),
        "control characters",
    ),
    (
        "huge status reason",
        |v| v["runs"][0]["status_reason"] = "x".repeat(70_000).into(),
        "runs[0].status_reason is 70000 bytes long: at most 65536 allowed",
    ),
    (
        "huge provenance",
        |v| v["runs"][0]["provenance"] = serde_json::json!({"x": "y".repeat(1 << 20)}),
        "runs[0].provenance is",
    ),
    (
        "huge stderr tail",
        |v| v["runs"][1]["stderr_tail"] = "e".repeat(300_000).into(),
        "runs[1].stderr_tail",
    ),
    (
        "a chart twice",
        |v| v["session"]["settings"]["charts"] = serde_json::json!(["throughput", "throughput"]),
        "each chart at most once",
    ),
    (
        "a hidden series twice",
        |v| v["session"]["settings"]["hidden_series"] = serde_json::json!(["1", "1"]),
        "hidden_series[1] appears twice",
    ),
    (
        "escape codes in the host name",
        |v| v["machine"]["hostname"] = "box\u{1b}[2J".into(),
        "machine.hostname",
    ),
    (
        "a long host name",
        |v| v["machine"]["hostname"] = "h".repeat(300).into(),
        "machine.hostname is 300 bytes long",
    ),
    (
        "a preloaded library in a run's configuration",
        |v| v["runs"][1]["spec"]["env"] = serde_json::json!({"LD_PRELOAD": "/tmp/evil.so"}),
        "runs[1].spec.env of run",
    ),
    (
        "a library NCCL would load",
        |v| v["runs"][0]["spec"]["env"] = serde_json::json!({"NCCL_NET_PLUGIN": "evil"}),
        "NCCL loads the library it names",
    ),
    (
        "a compiler dump folder",
        |v| v["runs"][0]["spec"]["env"] = serde_json::json!({"XLA_FLAGS": "--xla_dump_to=d"}),
        "runs[0].spec.env",
    ),
    (
        "variables that are not strings",
        |v| v["runs"][0]["spec"]["env"] = serde_json::json!(["LD_PRELOAD=x"]),
        "an object of NAME",
    ),
    (
        "a huge memory device",
        |v| v["runs"][0]["memory"][0]["device"] = "d".repeat(300).into(),
        "runs[0].memory[0].device",
    ),
];

/// The text of a model file some fixture run trained, and its SHA-256.
const MODEL_TEXT: &str = "def build():\n    return None\n";

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A valid file made version 2, its second run trained from a model file
/// whose copy it carries.
fn with_model_file(v: &mut serde_json::Value) {
    let sha = sha256_hex(MODEL_TEXT.as_bytes());
    v["version"] = 2.into();
    v["runs"][1]["spec"]["model_sha256"] = sha.clone().into();
    v["model_files"] = serde_json::json!([
        {"sha256": sha, "reference": "/home/a/m.py:build", "text": MODEL_TEXT}
    ]);
}

/// Model files that are not what the runs trained, or out of place.
const MODEL_FILES: &[Edit] = &[
    (
        "a model file in a version 1 file",
        |v| {
            with_model_file(v);
            v["version"] = 1.into();
        },
        "model_files is not allowed in a version 1 file",
    ),
    (
        "a model file no run trained",
        |v| {
            with_model_file(v);
            v["runs"][1]["spec"]["model_sha256"] = "0".repeat(64).into();
        },
        "model_files[0].sha256 = ",
    ),
    (
        "a model file changed after it was hashed",
        |v| {
            with_model_file(v);
            v["model_files"][0]["text"] = "import os\nos.system('x')\n".into();
        },
        "its text hashes to",
    ),
    (
        "a model file with a bad hash",
        |v| {
            with_model_file(v);
            v["model_files"][0]["sha256"] = "ABC".into();
        },
        "model_files[0].sha256",
    ),
    (
        "a model file twice",
        |v| {
            with_model_file(v);
            let again = v["model_files"][0].clone();
            v["model_files"].as_array_mut().expect("array").push(again);
        },
        "appears twice",
    ),
];

/// The valid file with each edit applied.
fn edited_files(
    good: &serde_json::Value,
    edits: &[Edit],
) -> Vec<(&'static str, Vec<u8>, &'static str)> {
    edits
        .iter()
        .map(|(label, edit, expect)| {
            let mut v = good.clone();
            edit(&mut v);
            (*label, v.to_string().into_bytes(), *expect)
        })
        .collect()
}

#[test]
fn bad_files_are_refused_with_a_clear_error_and_change_nothing() {
    let dir = scratch("bad");
    let good = valid_file_json(&dir);
    let mut target = Store::open(&dir.join("target.sqlite")).expect("open");
    let local = write_run(&mut target, &FixtureRun::default()).expect("local run");
    target
        .save_session("local", &[local], None, &SessionSettings::default())
        .expect("local session");
    let local_uid = {
        let mut mine = target.export_session(1, "t").expect("export local");
        mine.runs.remove(0).uid
    };
    let before = dump(&target);
    let cases = hostile_files(&good, &local_uid);
    for (label, bytes, expect) in cases {
        let err = match SessionFile::parse(&bytes) {
            Err(e) => e.to_string(),
            Ok(file) => match target.import_session(&file, None) {
                Err(e) => e.to_string(),
                Ok(o) => panic!("{label}: imported {o:?}"),
            },
        };
        assert!(err.contains(expect), "{label}: {err}");
        assert_eq!(dump(&target), before, "{label}: the database changed");
    }
    assert_eq!(target.integrity_check().expect("check"), "ok");
}

/// A version 2 file carries the copy of a model file: importing keeps it
/// under its hash (as text, never run) and exporting again carries it on;
/// an import whose copy does not hash to the runs' SHA-256 names the run.
#[test]
fn a_model_files_copy_travels_with_its_runs_and_is_checked() {
    let dir = scratch("model-file");
    let mut good = valid_file_json(&dir);
    assert_eq!(
        good["version"], 1,
        "no model file: readable by older studios"
    );
    assert!(good.get("model_files").is_none());
    with_model_file(&mut good);
    let file = SessionFile::parse(good.to_string().as_bytes()).expect("valid");
    let mut target = Store::open(&dir.join("target.sqlite")).expect("open");
    let outcome = target.import_session(&file, None).expect("imported");
    let sha = sha256_hex(MODEL_TEXT.as_bytes());
    let kept = target.model_file(&sha).expect("read").expect("kept");
    assert_eq!(kept.bytes, MODEL_TEXT.as_bytes());
    assert_eq!(kept.reference, "/home/a/m.py:build");
    let again = target
        .export_session(outcome.session_id, "test")
        .expect("exported again");
    assert_eq!(again.version, 2);
    assert_eq!(again.model_files, file.model_files);

    let mut forged = good.clone();
    forged["model_files"][0]["text"] = "print('other')\n".into();
    forged["session"]["uid"] = "e".repeat(32).into();
    let fresh = scratch("model-file-forged");
    let mut other = Store::open(&fresh.join("target.sqlite")).expect("open");
    let forged = SessionFile::parse(forged.to_string().as_bytes()).expect("parses");
    let err = other
        .import_session(&forged, None)
        .expect_err("refused")
        .to_string();
    let run = format!("run {} (pytorch", good["runs"][1]["id"]);
    assert!(err.contains(&run), "names the run: {err}");
    assert!(err.contains("/home/a/m.py:build"), "{err}");
    assert!(
        other.list_runs().expect("runs").is_empty(),
        "nothing imported"
    );
    assert_eq!(other.model_file(&sha).expect("read"), None, "no copy kept");
}

#[test]
fn an_imported_session_whose_name_is_taken_gets_a_name_that_can_be_typed_and_exported() {
    let dir = scratch("names");
    let mut good = valid_file_json(&dir);
    let mut target = Store::open(&dir.join("target.sqlite")).expect("open");
    let local = write_run(&mut target, &FixtureRun::default()).expect("local run");
    // The same name here already, and a 200-character name in the file from a
    // host whose name is as long as allowed.
    let long = "n".repeat(200);
    target
        .save_session(&long, &[local], None, &SessionSettings::default())
        .expect("local session");
    good["session"]["name"] = long.clone().into();
    good["machine"]["hostname"] = "h".repeat(255).into();
    let file = SessionFile::parse(good.to_string().as_bytes()).expect("valid");
    let outcome = target.import_session(&file, None).expect("imported");
    let name = outcome.session_name;
    assert_ne!(name, long);
    assert!(name.contains("(imported from hhh"), "{name}");
    trainbench_core::session::check_session_name(&name).expect("a name that could be typed");
    // And it travels on: exported and parsed again.
    let again = target
        .export_session(outcome.session_id, "test")
        .expect("exported again");
    let bytes = serde_json::to_vec(&again).expect("json");
    SessionFile::parse(&bytes).expect("the exported file imports");
}
