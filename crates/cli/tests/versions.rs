//! Framework releases on demand: `--framework jax==0.6.2,jax==0.7.2` makes
//! each release's environment from PyPI (real installs with uv) in a scratch
//! studio home, trains in both, compares them by release; `env list` shows
//! each with its disk; a disk budget removes the least recently used, and
//! `env remove` deletes one by name. A release outside the
//! supported range is refused before anything is installed, naming the field.
#![allow(clippy::unwrap_used, reason = "tests")]

mod common;

use common::{in_home, output_json, text, Scratch};

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
