//! Records the git revision the studio was built from (provenance).
fn main() {
    let rev = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".into());
    // `--no-optional-locks`: status must not refresh (rewrite) .git/index,
    // or the next build would see it changed and rebuild every crate that
    // depends on this one (found measuring `make run`).
    let dirty = std::process::Command::new("git")
        .args([
            "--no-optional-locks",
            "status",
            "--porcelain",
            "--untracked-files=no",
        ])
        .output()
        .ok()
        .is_some_and(|o| !o.stdout.is_empty());
    println!(
        "cargo:rustc-env=TRAINBENCH_GIT_REV={rev}{}",
        if dirty { "-dirty" } else { "" }
    );
    // Git's own paths for them: in a worktree `.git` is a file and HEAD and
    // the index live under the main clone's `.git/worktrees/NAME/`. A path
    // that does not exist reruns this script at every build, and so rebuilt
    // every crate above this one each time in a worktree.
    for file in ["HEAD", "index"] {
        let path = std::process::Command::new("git")
            .args(["rev-parse", "--path-format=absolute", "--git-path", file])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .filter(|p| std::path::Path::new(p).exists())
            .unwrap_or_else(|| format!("../../.git/{file}"));
        println!("cargo:rerun-if-changed={path}");
    }
}
