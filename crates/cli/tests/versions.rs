//! Framework releases on demand: `--framework jax==0.6.2,jax==0.7.2` makes
//! each release's environment from PyPI (real installs with uv) in a scratch
//! studio home, trains in both, compares them by release; `env list` shows
//! each with its disk; a disk budget removes the least recently used, and
//! `env remove` deletes one by name. A release outside the
//! supported range is refused before anything is installed, naming the field.
//! With a slow stand-in for uv (`tests/fake-uv/`) behind which the real
//! PyTorch interpreter runs: two installs of one release at once (the second waits
//! and finds it ready), an environment that runs another release (refused at
//! install and at a run), and the disk budget while a run uses a release
//! (kept, said, removed when the run ends).
#![allow(clippy::unwrap_used, reason = "tests")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{in_home, output_json, text, trainbench, Scratch};
use trainbench_app::{envs, versions};

#[test]
fn releases_outside_the_supported_range_are_refused_naming_the_field() {
    let scratch = Scratch::new("versions-refused");
    for args in [
        vec![
            "run",
            "--framework",
            "jax==0.4.30",
            "--steps",
            "4",
            "--json",
        ],
        vec![
            "run",
            "--framework",
            "pytorch==1.13.1",
            "--steps",
            "4",
            "--json",
        ],
        vec!["env", "install", "tch==2.13.0", "--json"],
        vec!["env", "install", "jax==0.7.2rc1", "--json"],
    ] {
        let (out, v) = output_json(in_home(&scratch.0).args(&args));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert_eq!(v["error"]["field"], "framework", "{args:?}: {v}");
    }
    let (out, v) = output_json(in_home(&scratch.0).args(["env", "remove", "jax==0.8.0", "--json"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], "version", "{v}");
    // Nothing was installed.
    assert!(!scratch.0.join("home/envs/versions").exists());
    // The studio's own release (in the studio's home) is not one to remove.
    let (out, v) =
        output_json(trainbench(&scratch.0).args(["env", "remove", "pytorch==2.13.0", "--json"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], "version", "{v}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("the studio's own pytorch environment"),
        "{v}"
    );
}

#[test]
fn two_jax_releases_are_installed_on_demand_trained_compared_and_evicted() {
    let scratch = Scratch::new("versions-jax");
    let (out, v) = output_json(in_home(&scratch.0).args([
        "run",
        "--framework",
        "jax==0.6.2,jax==0.7.2",
        "--model",
        "vit_mini_patch4_32",
        "--steps",
        "8",
        "--batch-size",
        "4",
        "--window-steps",
        "2",
        "--json",
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("jax==0.6.2 is not installed here: making its environment"),
        "{said}"
    );
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{v}");
    for r in runs {
        assert_eq!(r["status"], "completed", "{r}");
    }
    // Each run trained in its release.
    let ids: Vec<String> = runs.iter().map(|r| r["id"].to_string()).collect();
    for (id, release) in ids.iter().zip(["0.6.2", "0.7.2"]) {
        let (_, shown) = output_json(in_home(&scratch.0).args(["show", id, "--json"]));
        assert_eq!(shown["hello"]["framework_version"], release, "{shown}");
    }
    // Compared by release.
    let (out, compared) = output_json(in_home(&scratch.0).args(["compare", "--json"]).args(&ids));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let labels = compared.to_string();
    assert!(
        labels.contains("jax==0.6.2") && labels.contains("jax==0.7.2"),
        "{labels}"
    );

    // Listed with their disk; one removed.
    let (_, listed) = output_json(in_home(&scratch.0).args(["env", "list", "--json"]));
    let releases = listed["releases"].as_array().unwrap();
    assert_eq!(releases.len(), 2, "{listed}");
    for r in releases {
        assert!(r["bytes"].as_u64().unwrap() > 10 << 20, "{r}");
        assert!(r["last_used_unix_ms"].as_u64().is_some(), "{r}");
        assert_eq!(r["env"]["ready"], true, "{r}");
    }
    // A budget below what both take removes the least recently used one
    // (0.6.2 ran first); a release is removed by name.
    let (out, budget) = output_json(in_home(&scratch.0).args(["env", "budget", "1GiB", "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(budget["removed"][0][0], "jax==0.6.2", "{budget}");
    assert_eq!(budget["budget_bytes"], 1u64 << 30);
    assert!(!scratch.0.join("home/envs/versions/jax-0.6.2").exists());
    let out = in_home(&scratch.0)
        .args(["env", "remove", "jax==0.7.2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("removed jax==0.7.2's environment"));
    let (_, listed) = output_json(in_home(&scratch.0).args(["env", "list", "--json"]));
    assert_eq!(listed["releases"].as_array().unwrap().len(), 0, "{listed}");
    let (out, v) = output_json(in_home(&scratch.0).args(["env", "budget", "lots", "--json"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], "size", "{v}");
}

fn fake_uv_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-uv")
}

/// The interpreter of the studio's own PyTorch environment (2.13.0).
fn real_torch_python() -> PathBuf {
    let pin = versions::parse_pin("pytorch==2.13.0").unwrap().unwrap();
    envs::resolve(pin.framework, None).unwrap().python
}

/// The CLI in `scratch`'s studio home with the fake uv as its installer:
/// every environment it makes runs the real PyTorch 2.13.0 interpreter, and its
/// download waits for the file `scratch/uv.go`.
fn with_fake_uv(scratch: &Path) -> Command {
    let mut c = in_home(scratch);
    c.env("TRAINBENCH_UV", fake_uv_dir().join("uv.sh"))
        .env("FAKE_REAL_PYTHON", real_torch_python())
        .env("FAKE_UV_LOG", scratch.join("uv.log"))
        .env("FAKE_UV_GO", scratch.join("uv.go"));
    c
}

/// How many downloads (`uv pip install`) the fake uv has started.
fn downloads(scratch: &Path) -> usize {
    std::fs::read_to_string(scratch.join("uv.log"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

fn file_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Waits (five minutes at most: CI is a busy two-core machine) until `done`.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(300);
    while !done() {
        assert!(Instant::now() < deadline, "waited five minutes for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `pin`'s environment made by hand in `scratch`'s studio home, marked ready
/// for its CPU requirements, its python the fake one (real PyTorch 2.13.0).
fn made_by_hand(scratch: &Path, pin: &str) -> PathBuf {
    let pin = versions::parse_pin(pin).unwrap().unwrap();
    let dir = scratch
        .join("home/envs/versions")
        .join(versions::env_name(pin));
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::copy(fake_uv_dir().join("python.sh"), dir.join("bin/python")).unwrap();
    let req = scratch.join("requirements.txt");
    std::fs::write(&req, versions::requirements(pin, false)).unwrap();
    let sum = Command::new("sha256sum").arg(&req).output().unwrap();
    let sum = String::from_utf8_lossy(&sum.stdout);
    let sum = sum.split_whitespace().next().unwrap();
    std::fs::write(dir.join(".trainbench-ready"), sum).unwrap();
    dir
}

/// The folders in `dir` whose names end with `.installing`.
fn staging_left(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".installing"))
        .collect()
}

#[test]
fn two_installs_of_one_release_at_once_make_it_once() {
    let scratch = Scratch::new("versions-two-installs");
    let install = |tag: &str| {
        let said = std::fs::File::create(scratch.0.join(format!("{tag}.err"))).unwrap();
        with_fake_uv(&scratch.0)
            .args(["env", "install", "pytorch==2.13.0", "--cpu", "--json"])
            .stdout(Stdio::piped())
            .stderr(said)
            .spawn()
            .unwrap()
    };
    let first = install("first");
    wait_until("the first install's download", || {
        downloads(&scratch.0) == 1
    });
    let second = install("second");
    let waiting = "waiting for another install of pytorch==2.13.0 to finish";
    wait_until("the second install to wait or download", || {
        file_text(&scratch.0.join("second.err")).contains(waiting) || downloads(&scratch.0) > 1
    });
    let said = file_text(&scratch.0.join("second.err"));
    let downloads_while_first_ran = downloads(&scratch.0);
    // The download may finish now.
    std::fs::write(scratch.0.join("uv.go"), "").unwrap();
    let first = first.wait_with_output().unwrap();
    let second = second.wait_with_output().unwrap();
    assert!(said.contains(waiting), "{said}");
    assert_eq!(
        downloads_while_first_ran, 1,
        "the second install did not wait"
    );
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}\n{}",
        text(&second),
        file_text(&scratch.0.join("second.err"))
    );
    let made: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let found: serde_json::Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(made["install"]["found_ready"], false, "{made}");
    assert_eq!(found["install"]["found_ready"], true, "{found}");
    assert_eq!(found["ready"], true, "{found}");
    assert_eq!(downloads(&scratch.0), 1, "the release was made twice");
    let versions_dir = scratch.0.join("home/envs/versions");
    assert!(versions_dir
        .join("torch-2.13.0/.trainbench-ready")
        .is_file());
    assert!(versions_dir.join("torch-2.13.0/bin/python").is_file());
    assert_eq!(staging_left(&versions_dir), Vec::<String>::new());
}

#[test]
fn an_environment_that_runs_another_release_is_refused_at_install_and_at_a_run() {
    let scratch = Scratch::new("versions-other-release");
    std::fs::write(scratch.0.join("uv.go"), "").unwrap();
    // At install: the worker in the new environment reports PyTorch 2.13.0.
    let out = with_fake_uv(&scratch.0)
        .args(["env", "install", "pytorch==2.12.0", "--cpu", "--json"])
        .output()
        .unwrap();
    let said = text(&out);
    assert_ne!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("pytorch==2.12.0's environment runs pytorch 2.13.0"),
        "{said}"
    );
    let versions_dir = scratch.0.join("home/envs/versions");
    assert!(!versions_dir.join("torch-2.12.0").exists());
    assert_eq!(staging_left(&versions_dir), Vec::<String>::new());

    // At a run: an environment marked ready whose interpreter is another
    // release fails the run, naming both.
    made_by_hand(&scratch.0, "pytorch==2.12.0");
    let (out, v) = output_json(with_fake_uv(&scratch.0).args([
        "run",
        "--framework",
        "pytorch==2.12.0",
        "--model",
        "vit_mini_patch4_32",
        "--steps",
        "4",
        "--batch-size",
        "4",
        "--window-steps",
        "2",
        "--json",
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let run = &v["runs"][0];
    assert_eq!(run["status"], "failed", "{v}");
    let reason = run["status_reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("pytorch==2.12.0's environment runs pytorch 2.13.0"),
        "{v}"
    );
}

#[test]
fn the_disk_budget_keeps_a_release_a_run_is_using_and_removes_it_after() {
    let scratch = Scratch::new("versions-in-use");
    let dir = made_by_hand(&scratch.0, "pytorch==2.13.0");
    let hold = scratch.0.join("hold");
    let run = with_fake_uv(&scratch.0)
        .env("FAKE_PY_HOLD", &hold)
        .args([
            "run",
            "--framework",
            "pytorch==2.13.0",
            "--model",
            "vit_mini_patch4_32",
            "--steps",
            "4",
            "--batch-size",
            "4",
            "--window-steps",
            "2",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the run's worker to start", || {
        hold.with_extension("started").exists()
    });
    let (out, budget) =
        output_json(with_fake_uv(&scratch.0).args(["env", "budget", "1", "--json"]));
    let kept = dir.exists();
    // The worker may train now.
    std::fs::write(hold.with_extension("go"), "").unwrap();
    let ran = run.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        kept,
        "the budget removed the environment under the run: {budget}"
    );
    assert_eq!(budget["removed"], serde_json::json!([]), "{budget}");
    assert_eq!(budget["in_use"][0][0], "pytorch==2.13.0", "{budget}");
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran));
    let v: serde_json::Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(v["runs"][0]["status"], "completed", "{v}");
    // Free again and still over the budget: removed.
    assert!(!dir.exists(), "kept after the run ended");
    let (_, listed) = output_json(in_home(&scratch.0).args(["env", "list", "--json"]));
    assert_eq!(listed["releases"], serde_json::json!([]), "{listed}");
}
