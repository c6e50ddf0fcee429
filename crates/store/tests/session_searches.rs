//! A search (`trainbench tune`) carried by a session file: exported when the
//! session holds every run of it, imported as a sweep of its own with its
//! trace, the trace's run ids this database's; refused when the file names
//! runs it does not carry or is of a version before searches.

use std::path::PathBuf;

use trainbench_core::session::{SessionFile, SessionSettings};
use trainbench_core::tune::method::TuneOutcome;
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::{Store, StoredTune};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "trainbench-store-searches-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A trace of two candidates over `runs` (the first two runs the probe,
/// the rest the first candidate's confirmation).
fn trace(runs: &[i64]) -> String {
    let run = |id: i64, v: f64| serde_json::json!({"run_id": id, "started_s": 1.0, "value": v, "failure": null});
    let conf: Vec<_> = runs[2..].iter().map(|&id| run(id, 410.0)).collect();
    serde_json::json!({
        "objective": "throughput", "unit": "samples/s", "ended": "finished",
        "winner": 0, "runner_up": 1, "ratio": 1.2, "ratio_ci95": {"low": 1.1, "high": 1.3},
        "tie": false, "confirmed": true, "verdict": "b32 wins", "rounds": 2,
        "candidates": [
            {"label": "b32", "fate": "winner", "round_reached": 1, "why": "the winner", "rounds": [
                {"round": 0, "kind": "probe", "length_factor": 1, "runs": [run(runs[0], 400.0)], "value": 400.0, "ci95": null},
                {"round": 1, "kind": "confirm", "length_factor": 2, "runs": conf, "value": 410.0, "ci95": null}]},
            {"label": "b8", "fate": "runner_up", "round_reached": 0, "why": "the runner-up", "rounds": [
                {"round": 0, "kind": "probe", "length_factor": 1, "runs": [run(runs[1], 330.0)], "value": 330.0, "ci95": null}]}
        ]
    })
    .to_string()
}

/// A store with a search of four runs in its sweep, and one run of no
/// search; the session holds `in_session` of the search's runs.
fn source(dir: &std::path::Path, in_session: usize) -> (Store, i64, Vec<i64>) {
    let mut store = Store::open(&dir.join("source.sqlite")).expect("open");
    let sweep = store.create_sweep("trainbench tune", 2, 1).expect("sweep");
    let runs: Vec<i64> = (0..4)
        .map(|i| {
            let f = FixtureRun {
                batch_size: if i == 1 { 8 } else { 32 },
                seed: i,
                sweep_id: Some(sweep),
                ..Default::default()
            };
            write_run(&mut store, &f).expect("run")
        })
        .collect();
    store
        .save_tune(&StoredTune {
            sweep_id: sweep,
            model: "resnet_mini".into(),
            objective: "throughput".into(),
            outcome_json: trace(&runs),
            updated_unix_ms: 0,
        })
        .expect("trace");
    let other = write_run(
        &mut store,
        &FixtureRun {
            seed: 9,
            ..Default::default()
        },
    )
    .expect("run");
    let mut held: Vec<i64> = runs[..in_session].to_vec();
    held.push(other);
    let s = store
        .save_session("search", &held, None, &SessionSettings::default())
        .expect("session");
    (store, s.id, runs)
}

#[test]
fn a_search_travels_with_its_runs_and_is_stored_with_local_ids() {
    let dir = scratch("travels");
    let (store, session, runs) = source(&dir, 4);
    let file = store.export_session(session, "test").expect("export");
    assert_eq!(file.version, 3, "searches need version 3");
    assert_eq!(file.searches.len(), 1);
    assert_eq!(
        file.searches[0].run_ids(),
        [runs[0], runs[2], runs[3], runs[1]]
    );
    let bytes = serde_json::to_vec(&file).expect("json");
    let parsed = SessionFile::parse(&bytes).expect("parses");

    // Imported where other runs already took the first ids.
    let mut target = Store::open(&dir.join("target.sqlite")).expect("open");
    for seed in 20..23 {
        write_run(
            &mut target,
            &FixtureRun {
                seed,
                ..Default::default()
            },
        )
        .expect("run");
    }
    let outcome = target.import_session(&parsed, None).expect("import");
    assert_eq!(outcome.runs_imported, 5);
    let local = target.session(outcome.session_id).expect("session").run_ids;
    let sweeps: Vec<Option<i64>> = local
        .iter()
        .map(|&id| target.run_detail(id).expect("run").row.sweep_id)
        .collect();
    let sweep = sweeps[0].expect("the search's runs are in a sweep");
    assert!(sweeps[..4].iter().all(|s| *s == Some(sweep)), "{sweeps:?}");
    assert_eq!(sweeps[4], None, "the run of no search stays in none");
    let stored = target
        .tune(sweep)
        .expect("read")
        .expect("the trace is stored");
    assert_eq!(stored.model, "resnet_mini");
    let outcome: TuneOutcome = serde_json::from_str(&stored.outcome_json).expect("trace");
    let ids: Vec<i64> = outcome.candidates[0].rounds[0]
        .runs
        .iter()
        .map(|r| r.run_id)
        .collect();
    assert_eq!(ids, [local[0]], "the probe's run, by its id here");
    assert_ne!(local[0], runs[0], "ids here differ from the source's");
    assert_eq!(outcome.ratio, Some(1.2));

    // Exported again from here, it travels on, with this database's ids.
    let again = target
        .export_session(outcome_session(&target), "test")
        .expect("export");
    assert_eq!(again.searches.len(), 1);
    assert_eq!(again.searches[0].run_ids()[0], local[0]);
}

fn outcome_session(store: &Store) -> i64 {
    store.sessions().expect("sessions")[0].id
}

#[test]
fn a_search_whose_runs_the_session_lacks_stays_home() {
    let dir = scratch("partial");
    let (store, session, _) = source(&dir, 2);
    let file = store.export_session(session, "test").expect("export");
    assert!(file.searches.is_empty());
    assert_eq!(
        file.version, 1,
        "nothing newer needed: older studios read it"
    );
}

#[test]
fn a_file_naming_runs_it_lacks_or_too_old_for_searches_is_refused_naming_the_field() {
    let dir = scratch("refused");
    let (store, session, _) = source(&dir, 4);
    let file = store.export_session(session, "test").expect("export");
    let good = serde_json::to_value(&file).expect("json");

    let mut old = good.clone();
    old["version"] = 2.into();
    let err = SessionFile::parse(old.to_string().as_bytes())
        .expect_err("refused")
        .to_string();
    assert!(
        err.contains("searches") && err.contains("expected version 3"),
        "{err}"
    );

    let mut stranger = good.clone();
    stranger["searches"][0]["outcome"]["candidates"][1]["rounds"][0]["runs"][0]["run_id"] =
        99_999.into();
    let err = SessionFile::parse(stranger.to_string().as_bytes())
        .expect_err("refused")
        .to_string();
    assert!(
        err.contains("searches[0].outcome") && err.contains("run 99999"),
        "{err}"
    );

    let mut winner = good.clone();
    winner["searches"][0]["outcome"]["winner"] = 7.into();
    let err = SessionFile::parse(winner.to_string().as_bytes())
        .expect_err("refused")
        .to_string();
    assert!(err.contains("searches[0].outcome.winner"), "{err}");

    let mut objective = good;
    objective["searches"][0]["objective"] = "fastest".into();
    let err = SessionFile::parse(objective.to_string().as_bytes())
        .expect_err("refused")
        .to_string();
    assert!(err.contains("searches[0].objective"), "{err}");
}
