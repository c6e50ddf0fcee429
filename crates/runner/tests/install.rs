//! Installing a framework environment for real (uv, from PyPI) into a
//! temporary studio home: progress is reported from the installer's own
//! output, a cancelled re-install leaves the working environment as it was,
//! and a failing install gives the installer's reason and registers nothing.
//! One test function: the studio home is a process-wide setting.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use trainbench_core::Framework;
use trainbench_runner::envs::{self, EnvError};

fn leftovers(envs_dir: &Path) -> Vec<String> {
    std::fs::read_dir(envs_dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    n.starts_with('.') && (n.ends_with(".installing") || n.ends_with(".old"))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn jax_ready() -> bool {
    envs::list()
        .unwrap()
        .into_iter()
        .any(|e| e.builtin && e.framework == Framework::Jax && e.ready)
}

#[test]
fn install_reports_progress_cancel_keeps_the_old_environment_and_failure_says_why() {
    if envs::uv_program().is_none() {
        // setup.sh installs uv; pip's path is the same code with other steps.
        panic!("uv is not installed: run scripts/setup.sh");
    }
    let uv = envs::uv_program().unwrap();
    let home = tempfile_dir();
    std::env::set_var("TRAINBENCH_HOME", &home);
    std::env::set_var("TRAINBENCH_UV", &uv);
    let envs_dir = home.join("envs");
    assert!(!jax_ready());

    // 1. A real install: the installer's lines and figures come through.
    let never = AtomicBool::new(false);
    let mut lines = Vec::new();
    let mut steps = Vec::new();
    let installed = envs::install(Framework::Jax, false, &never, |u| {
        lines.push(u.line.to_owned());
        if steps.last() != Some(&u.progress.step) {
            steps.push(u.progress.step.clone());
        }
    })
    .unwrap();
    assert!(installed.env.ready && jax_ready());
    assert_eq!(installed.env.version.as_deref(), Some("0.10.2"));
    assert_eq!(installed.info["version"], "0.10.2", "{:?}", installed.info);
    let p = &installed.progress;
    assert!(p.packages_total.is_some_and(|n| n >= 10), "{p:?}");
    assert_eq!(Some(p.packages_installed), p.packages_total, "{p:?}");
    assert_eq!(p.bytes_done, p.bytes_total, "{p:?}");
    assert!(
        lines.iter().any(|l| l.starts_with("Resolved ")),
        "{lines:?}"
    );
    for s in [
        "creating the environment",
        "resolved",
        "installed",
        "checking the worker",
    ] {
        assert!(steps.iter().any(|x| x == s), "no step {s:?} in {steps:?}");
    }
    assert!(leftovers(&envs_dir).is_empty());
    let python = installed.env.python.clone();
    let marker = std::fs::read_to_string(envs_dir.join("jax-0.10.2/.trainbench-ready")).unwrap();

    // 2. A re-install cancelled while uv installs: the working environment
    // stays, and no installer process or staging folder is left.
    let cancel = AtomicBool::new(false);
    let mut saw_uv_install = false;
    let err = envs::install(Framework::Jax, false, &cancel, |u| {
        if u.line.contains(" pip install ") {
            saw_uv_install = true;
        } else if saw_uv_install {
            // The installer's first line: cancel now.
            cancel.store(true, Ordering::SeqCst);
        }
    })
    .unwrap_err();
    assert!(matches!(err, EnvError::Cancelled { .. }), "{err}");
    assert!(err.to_string().contains("cancelled"), "{err}");
    assert!(
        jax_ready(),
        "the cancelled re-install broke the working environment"
    );
    assert_eq!(
        std::fs::read_to_string(envs_dir.join("jax-0.10.2/.trainbench-ready")).unwrap(),
        marker
    );
    assert!(python.exists());
    assert!(
        leftovers(&envs_dir).is_empty(),
        "{:?}",
        leftovers(&envs_dir)
    );
    let staging = envs_dir
        .join(format!(".jax-0.10.2.{}.installing", std::process::id()))
        .display()
        .to_string();
    assert!(
        !processes_mentioning(&staging),
        "an installer process outlived the cancel"
    );

    // 3. A failure: uv offline with an empty cache finds no jax. Its reason
    // reaches the error, and the environment that worked still does.
    let empty_cache = home.join("empty-uv-cache");
    std::env::set_var("UV_CACHE_DIR", &empty_cache);
    std::env::set_var("UV_OFFLINE", "1");
    let err = envs::install(Framework::Jax, false, &never, |_| {}).unwrap_err();
    std::env::remove_var("UV_OFFLINE");
    std::env::remove_var("UV_CACHE_DIR");
    let text = err.to_string();
    assert!(matches!(err, EnvError::Install { .. }), "{text}");
    assert!(text.contains("installing jax failed"), "{text}");
    assert!(text.contains("exited with"), "{text}");
    assert!(
        text.contains("No solution found") && text.contains("jax[cpu]==0.10.2"),
        "the installer's reason is missing: {text}"
    );
    assert!(jax_ready());
    assert!(
        leftovers(&envs_dir).is_empty(),
        "{:?}",
        leftovers(&envs_dir)
    );

    let _ = std::fs::remove_dir_all(&home);
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("trainbench-install-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Whether a running process has `needle` in its command line.
fn processes_mentioning(needle: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| String::from_utf8_lossy(&c).contains(needle))
            .unwrap_or(false)
    })
}
