#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::*;

/// A test's own folder in the temp folder, removed with what it holds when
/// the test ends (a failing one too).
fn scratch(name: &str) -> OwnedDir {
    let dir = std::env::temp_dir().join(format!("tb-files-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    OwnedDir::new(dir)
}

fn a_database(path: &Path) {
    let mut bytes = SQLITE_HEADER.to_vec();
    bytes.resize(4096, 0);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_write_replaces_the_target_whole_and_leaves_no_temporary_file() {
    let dir = scratch("write");
    let target = dir.join("report.pdf");
    std::fs::write(&target, b"old").unwrap();
    write_atomic("output", &target, b"new contents").unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"new contents");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(left.len(), 1, "only the target: {left:?}");
}

#[test]
fn a_file_made_as_it_is_written_replaces_the_target_only_when_whole() {
    let dir = scratch("write-with");
    let target = dir.join("runs.csv");
    std::fs::write(&target, b"old").unwrap();
    // Made in many pieces: only once `fill` is done does the target change.
    let n = write_atomic_with("output", &target, |w| {
        (0..1000).try_for_each(|i| writeln!(w, "row {i}"))
    })
    .unwrap()
    .unwrap();
    let text = std::fs::read_to_string(&target).unwrap();
    assert_eq!((text.lines().count(), n), (1000, text.len() as u64));
    // `fill` failing halfway leaves the target as it was and nothing beside it.
    let e = write_atomic_with("output", &target, |w| {
        w.write_all(b"half")?;
        Err::<(), _>(std::io::Error::other("the listing failed"))
    })
    .unwrap()
    .unwrap_err();
    assert_eq!(e.to_string(), "the listing failed");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), text);
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(left.len(), 1, "only the target: {left:?}");
}

#[test]
fn a_write_into_a_missing_folder_or_onto_a_folder_names_the_field() {
    let dir = scratch("badwrite");
    let e = write_atomic("output", &dir.join("no/such/x.csv"), b"x").unwrap_err();
    assert_eq!(e.field(), Some("output"));
    assert!(e.to_string().contains("does not exist"), "{e}");
    let e = write_atomic("output", &dir, b"x").unwrap_err();
    assert!(e.to_string().contains("not a folder"), "{e}");
}

#[test]
fn sqlite_files_and_their_side_files_are_refused() {
    let dir = scratch("sqlite");
    let db = dir.join("store.sqlite");
    a_database(&db);
    for p in [
        db.clone(),
        dir.join("store.sqlite-wal"),
        dir.join("store.sqlite-shm"),
    ] {
        let e = refuse_sqlite("output", &p, &[]).unwrap_err();
        assert_eq!(e.field(), Some("output"));
        assert!(e.to_string().contains("never replace a database"), "{e}");
    }
    // Another name for the same database, through a link.
    let link = dir.join("link.csv");
    std::os::unix::fs::symlink(&db, &link).unwrap();
    assert!(refuse_sqlite("output", &link, &[]).is_err());
    // The open database is refused even before it has a header on disk.
    let fresh = dir.join("fresh.db");
    std::fs::write(&fresh, b"").unwrap();
    let e = refuse_sqlite("output", &dir.join("./fresh.db-wal"), &[&fresh]).unwrap_err();
    assert!(e.to_string().contains("open database"), "{e}");
    // Ordinary files and new names are fine.
    std::fs::write(dir.join("old.csv"), b"a,b\n").unwrap();
    refuse_sqlite("output", &dir.join("old.csv"), &[&fresh]).unwrap();
    refuse_sqlite("output", &dir.join("new.pdf"), &[&fresh]).unwrap();
    refuse_sqlite("output", &dir.join("x-wal"), &[&fresh]).unwrap();
}

#[test]
fn reads_refuse_what_is_not_a_bounded_regular_file_at_once() {
    let dir = scratch("read");
    let fifo = dir.join("pipe");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let started = Instant::now();
    for (path, says) in [
        (PathBuf::from("/dev/zero"), "a device"),
        (fifo, "a named pipe"),
        (dir.to_path_buf(), "a folder"),
        (PathBuf::from("/proc/self/status"), "kernel"),
        (dir.join("missing.json"), "readable regular file"),
    ] {
        let e = read_bounded("file", &path, "a session file", 1 << 20).unwrap_err();
        assert_eq!(e.field(), Some("file"), "{e}");
        assert!(e.to_string().contains(says), "{path:?}: {e}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "nothing blocked"
    );
    let big = dir.join("big.json");
    std::fs::write(&big, vec![b' '; 2000]).unwrap();
    let e = read_bounded("file", &big, "a session file", 1000).unwrap_err();
    assert!(
        e.to_string().contains("at most 1000 bytes (it has 2000)"),
        "{e}"
    );
    assert_eq!(read_bounded("file", &big, "x", 2000).unwrap().len(), 2000);
}

#[test]
fn locked_read_modify_writes_from_many_threads_lose_nothing() {
    let dir = scratch("lock");
    let file = dir.join("list.txt");
    std::fs::write(&file, b"").unwrap();
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let file = file.clone();
            std::thread::Builder::new()
                .name(format!("locker-{i}"))
                .spawn(move || {
                    for j in 0..10 {
                        let _lock = FileLock::exclusive(&file).unwrap();
                        let mut text = std::fs::read_to_string(&file).unwrap();
                        std::thread::yield_now();
                        text.push_str(&format!("{i}-{j}\n"));
                        write_atomic("file", &file, text.as_bytes()).unwrap();
                    }
                })
                .unwrap()
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let lines = std::fs::read_to_string(&file).unwrap().lines().count();
    assert_eq!(lines, 80, "every change kept");
}

#[test]
fn a_tried_lock_is_refused_while_held_and_shared_holders_keep_it_out() {
    let dir = scratch("try-lock");
    let file = dir.join("env");
    let held = FileLock::exclusive(&file).unwrap();
    assert!(FileLock::try_exclusive(&file).unwrap().is_none());
    drop(held);
    let first = FileLock::shared(&file).unwrap();
    let second = FileLock::shared(&file).unwrap();
    assert!(FileLock::try_exclusive(&file).unwrap().is_none());
    drop(first);
    assert!(FileLock::try_exclusive(&file).unwrap().is_none());
    drop(second);
    assert!(FileLock::try_exclusive(&file).unwrap().is_some());
}

#[test]
fn a_folder_made_first_by_another_is_never_a_private_one() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let base = std::env::temp_dir().join(format!("tb-private-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    // The first name, made beforehand and writable by anyone.
    let taken = base.join("trainbench-capture-7-0");
    std::fs::create_dir(&taken).unwrap();
    std::fs::set_permissions(&taken, std::fs::Permissions::from_mode(0o777)).unwrap();
    let dir = private_dir(&base, "trainbench-capture-7").unwrap();
    assert_eq!(dir, base.join("trainbench-capture-7-1"));
    assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o077, 0);
    std::fs::remove_dir_all(&base).unwrap();
}
