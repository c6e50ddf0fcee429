//! The store under hostile paths and concurrent openers: no export replaces a
//! database, several processes opening a new or old database at once all
//! succeed, and a database this studio cannot use is refused with a message
//! that says why, the file left as it was; a run outlasts another process
//! holding the store's lock; the price table is listed, added to and edited
//! in place.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

mod common;

use std::path::Path;
use std::process::Command;

use common::{text, Db};
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::Store;

/// Two generated runs (ids 1 and 2), saved as session "s".
fn seeded(name: &str) -> Db {
    let db = Db::new(name);
    let mut store = Store::open(&db.path()).unwrap();
    for seed in [1, 2] {
        write_run(
            &mut store,
            &FixtureRun {
                seed,
                samples_per_s: 300.0 + seed as f64 * 50.0,
                ..FixtureRun::default()
            },
        )
        .unwrap();
    }
    drop(store);
    let (out, _) = db.run(&["session", "save", "s", "1", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    db
}

fn run_count(path: &Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    conn.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn no_export_replaces_the_open_database_its_side_files_or_any_sqlite_file() {
    let db = seeded("export-guard");
    let store = db.path();
    let other = db.dir().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .unwrap();
    let link = db.dir().join("link.png");
    std::os::unix::fs::symlink(&store, &link).unwrap();
    let targets = [
        store.clone(),
        db.dir().join("studio.sqlite-wal"),
        db.dir().join("studio.sqlite-shm"),
        db.dir().join("./studio.sqlite"),
        link,
        other.clone(),
    ];
    for target in &targets {
        let t = target.to_str().unwrap();
        for args in [
            vec!["export", "pdf", "1", "2", "-o", t],
            vec!["export", "csv", "-o", t],
            vec!["export", "chart", "throughput", "1", "2", "-o", t],
            vec!["export", "session", "s", "-o", t],
        ] {
            let (out, _) = db.run(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
            assert!(err.contains("output"), "the field is named: {err}");
            // A chart's name must end in .png or .svg, which is checked first.
            if args[1] != "chart" || t.ends_with(".png") {
                assert!(err.contains("never replace a database"), "{err}");
            }
        }
    }
    assert_eq!(run_count(&store), 2, "the store is untouched");
    let conn = rusqlite::Connection::open(&other).unwrap();
    let x: i64 = conn.query_row("SELECT x FROM t", [], |r| r.get(0)).unwrap();
    assert_eq!(x, 1, "the other database is untouched");
    // A link to the database named like a chart is refused as the database.
    assert!(targets.iter().any(|t| t.ends_with("link.png")));
    // An ordinary file is replaced whole, with nothing left beside it.
    let csv = db.dir().join("runs.csv");
    std::fs::write(&csv, "old").unwrap();
    let (out, _) = db.run(&["export", "csv", "-o", csv.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(std::fs::read_to_string(&csv)
        .unwrap()
        .contains("throughput"));
    let partial = std::fs::read_dir(db.dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".partial"))
        .count();
    assert_eq!(partial, 0, "no temporary file left");
}

#[test]
fn several_processes_opening_a_new_or_old_database_at_once_all_succeed() {
    let db = Db::new("open-race");
    for round in 0..8 {
        let path = db.dir().join(format!("race-{round}.sqlite"));
        if round % 2 == 1 {
            // An old database: only the first migrations applied.
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute_batch(
                "CREATE TABLE schema_migrations (
                     version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_unix_ms INTEGER NOT NULL)",
            )
            .unwrap();
            for (version, name, sql) in &trainbench_store::MIGRATIONS[..3] {
                conn.execute_batch(sql).unwrap();
                conn.execute(
                    "INSERT INTO schema_migrations VALUES (?1, ?2, 0)",
                    rusqlite::params![version, name],
                )
                .unwrap();
            }
        }
        let openers: Vec<_> = (0..6)
            .map(|_| {
                Command::new(common::TRAINBENCH)
                    .arg("--db")
                    .arg(&path)
                    .args(["runs", "--json"])
                    .env("TRAINBENCH_NO_NVML", "1")
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in openers {
            let out = child.wait_with_output().unwrap();
            assert_eq!(out.status.code(), Some(0), "round {round}: {}", text(&out));
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(
            store.schema_version().unwrap(),
            trainbench_store::MIGRATIONS.len() as u32
        );
        assert_eq!(
            store.prices().unwrap().len(),
            trainbench_core::reference::default_prices().len(),
            "prices seeded once"
        );
    }
}

#[test]
fn a_newer_damaged_or_foreign_database_is_refused_and_left_as_it_was() {
    let db = Db::new("refused");
    let newer = db.dir().join("newer.sqlite");
    drop(Store::open(&newer).unwrap());
    rusqlite::Connection::open(&newer)
        .unwrap()
        .execute(
            "INSERT INTO schema_migrations VALUES (999, '0999_future.sql', 0)",
            [],
        )
        .unwrap();
    let damaged = db.dir().join("damaged.sqlite");
    std::fs::write(&damaged, vec![0x5a_u8; 8192]).unwrap();
    let foreign = db.dir().join("foreign.sqlite");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE contacts (name TEXT)")
        .unwrap();
    for (path, says) in [
        (&newer, "newer TrainBench"),
        (&damaged, "not a TrainBench database"),
        (&foreign, "belongs to another program"),
    ] {
        let before = std::fs::read(path).unwrap();
        let out = Command::new(common::TRAINBENCH)
            .arg("--db")
            .arg(path)
            .args(["runs"])
            .env("TRAINBENCH_NO_NVML", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(err.contains(says), "{path:?}: {err}");
        assert!(err.contains("choose another file"), "{err}");
        assert_eq!(std::fs::read(path).unwrap(), before, "{path:?} unchanged");
    }
}

/// Windows stored for run `id`.
fn stored_windows(path: &Path, id: i64) -> i64 {
    rusqlite::Connection::open(path)
        .unwrap()
        .query_row(
            "SELECT COUNT(*) FROM windows WHERE run_id = ?1",
            [id],
            |r| r.get(0),
        )
        .unwrap()
}

/// A run long enough that a lock or a full disk comes while it trains.
const LONG_RUN: [&str; 10] = [
    "run",
    "--model",
    "resnet_mini",
    "--steps",
    "150",
    "--batch-size",
    "8",
    "--window-steps",
    "3",
    "--json",
];

/// How many windows [`LONG_RUN`] stores undisturbed.
fn undisturbed_windows(db: &Db) -> i64 {
    let (out, v) = db.run(&LONG_RUN);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let expected = stored_windows(&db.path(), v["runs"][0]["id"].as_i64().unwrap());
    assert!(expected > 3, "{expected} windows");
    expected
}

#[test]
fn a_run_completes_with_every_window_while_another_process_holds_the_store_for_15_s() {
    let db = Db::new("busy-store");
    let args = LONG_RUN;
    let expected = undisturbed_windows(&db);

    let run = db
        .cmd()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Another writer takes the lock once the run has stored a window, and
    // holds it for 15 s (longer than any wait for a lock).
    common::wait_for_windows(&db, 2, 1);
    let holder = rusqlite::Connection::open(db.path()).unwrap();
    holder
        .execute_batch("BEGIN IMMEDIATE; UPDATE prices SET source = source;")
        .unwrap();
    let held = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_secs(15));
    holder.execute_batch("COMMIT").unwrap();
    drop(holder);
    let out = run.wait_with_output().unwrap();
    assert!(held.elapsed().as_secs() >= 15);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"][0]["status"], "completed", "{v}");
    assert_eq!(stored_windows(&db.path(), 2), expected, "every window");
}

#[test]
fn imports_refuse_devices_pipes_folders_and_kernel_files_at_once() {
    let db = Db::new("hostile-import");
    let fifo = db.dir().join("pipe.json");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let huge = db.dir().join("huge.json");
    // A sparse file just over the bound: refused by its size, nothing read.
    let f = std::fs::File::create(&huge).unwrap();
    f.set_len(trainbench_core::session::MAX_SESSION_FILE_BYTES as u64 + 1)
        .unwrap();
    drop(f);
    for (path, says) in [
        (Path::new("/dev/zero").to_path_buf(), "a device"),
        (fifo, "a named pipe"),
        (db.dir().to_path_buf(), "a folder"),
        (Path::new("/proc/self/status").to_path_buf(), "kernel"),
        (huge, "at most"),
    ] {
        let started = std::time::Instant::now();
        let (out, _) = db.run(&["import", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{path:?}: {}", text(&out));
        assert!(err.contains("file = "), "the field is named: {err}");
        assert!(err.contains(says), "{path:?}: {err}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{path:?} took {:?}",
            started.elapsed()
        );
    }
}

/// A small tmpfs mounted over a folder (root only); unmounted when dropped.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(dir.to_owned()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fills the file system holding `path` with it, to the last byte.
fn fill(path: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(path).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    while f.write(&chunk).is_ok_and(|n| n > 0) {}
    let one = [0u8; 1];
    while f.write(&one).is_ok_and(|n| n > 0) {}
    let _ = f.sync_all();
}

#[test]
fn a_full_disk_keeps_the_worker_training_and_the_sweep_is_stored_whole_when_space_returns() {
    let db = Db::new("full-disk");
    // A real file system that fills: a 16 MiB tmpfs holding the database.
    let Some(_fs) = Tmpfs::mount(db.dir(), "16m") else {
        eprintln!("SKIPPED: a tmpfs cannot be mounted here (it needs root)");
        return;
    };
    let expected = undisturbed_windows(&db);
    let mut args = LONG_RUN.to_vec();
    args.extend(["--repeats", "2"]);

    let mut run = db
        .cmd()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stderr = run.stderr.take().unwrap();
    let reader = std::thread::Builder::new()
        .name("stderr".into())
        .spawn(move || {
            use std::io::BufRead;
            let mut all = String::new();
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(line.clone());
                all.push_str(&line);
                all.push('\n');
            }
            all
        })
        .unwrap();
    common::wait_for_windows(&db, 2, 1);
    let filler = db.dir().join("filler");
    fill(&filler);
    // The worker trains to its end; the studio then waits for space, saying so.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    loop {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
            .expect("the studio never said the disk is full");
        if line.contains("the disk holding the database is full")
            && line.contains("free some space")
        {
            break;
        }
    }
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert!(
        run.try_wait().unwrap().is_none(),
        "the studio gave up on a full disk"
    );
    std::fs::remove_file(&filler).unwrap();
    let status = run.wait().unwrap();
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut run.stdout.take().unwrap(), &mut stdout).unwrap();
    let log = reader.join().unwrap();
    assert!(status.success(), "{stdout}\n{log}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for r in v["runs"].as_array().unwrap() {
        assert_eq!(r["status"], "completed", "{r}");
        let id = r["id"].as_i64().unwrap();
        assert_eq!(
            stored_windows(&db.path(), id),
            expected,
            "every window of run {id}"
        );
    }
    assert_eq!(v["runs"].as_array().unwrap().len(), 2, "{v}");
    // Nothing was half-written.
    assert_eq!(run_count(&db.path()), 3);
}

#[test]
fn prices_can_be_listed_added_and_edited() {
    let db = Db::new("prices");
    let (out, v) = db.run(&["prices", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        v["prices"].as_array().unwrap().len(),
        trainbench_core::reference::default_prices().len()
    );
    let (out, v) = db.run(&[
        "prices",
        "add",
        "My lab 4x L40S",
        "--devices",
        "4",
        "--device",
        "L40S",
        "--usd-per-hour",
        "6",
        "--as-of",
        "2026-11",
        "--source",
        "our invoice",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let row = v["prices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["row"]["offering"] == "My lab 4x L40S")
        .unwrap()
        .clone();
    assert_eq!(row["row"]["usd_per_device_hour"], 1.5);
    let (out, v) = db.run(&[
        "prices",
        "edit",
        "My lab 4x L40S",
        "--usd-per-hour",
        "8",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let row = v["prices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["row"]["offering"] == "My lab 4x L40S")
        .unwrap()
        .clone();
    assert_eq!(
        (
            row["row"]["usd_per_device_hour"].as_f64(),
            row["edited_by_user"].as_bool()
        ),
        (Some(2.0), Some(true))
    );
    let (out, v) = db.run(&[
        "prices",
        "add",
        "Broken",
        "--devices",
        "1",
        "--device",
        "X",
        "--usd-per-hour",
        "-3",
        "--as-of",
        "x",
        "--source",
        "y",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(v["error"]["field"], "usd_per_hour");
    // The desktop app's rules are the same (core's PriceRow::validate): a
    // price of 0, a date that is not one, too many devices are refused.
    let add = |extra: &[&str]| {
        let mut a = vec!["prices", "add", "Checked", "--device", "X", "--source", "y"];
        for (flag, default) in [
            ("--devices", "2"),
            ("--usd-per-hour", "4"),
            ("--as-of", "2026-11-01"),
        ] {
            if !extra.contains(&flag) {
                a.extend([flag, default]);
            }
        }
        a.extend_from_slice(extra);
        a.push("--json");
        db.run(&a)
    };
    for (extra, field) in [
        (&["--usd-per-hour", "0"][..], "usd_per_hour"),
        (&["--as-of", "last week"][..], "as_of"),
        (&["--as-of", "2026-02-30"][..], "as_of"),
        (&["--devices", "2000"][..], "devices"),
        (
            &["--usd-per-device-hour", "20000"][..],
            "usd_per_device_hour",
        ),
    ] {
        let (out, v) = add(extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {v}");
        assert_eq!(v["error"]["field"], field, "{extra:?}: {v}");
    }
    let (_, v) = db.run(&["prices", "--json"]);
    assert!(
        !v["prices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["row"]["offering"] == "Checked"),
        "nothing refused was stored: {v}"
    );
}
