//! Every command example in README.md and docs/cli.md, read from the docs
//! and run against the binary cargo built.
//!
//! What counts as an example: in a fenced block marked `sh`, every line that
//! is not blank or a comment; in any other fenced block, the lines that start
//! with `$ ` (a transcript; the lines after it are its output). A line ending
//! in `\` goes on on the next. `NAME=target/release/PROGRAM` binds `$NAME` to
//! the program cargo built (`BINDINGS`); `trainbench` is found on `PATH`.
//!
//! How each runs: through `bash -o pipefail -c`, each block in its own
//! scratch directory with a fresh database (`TRAINBENCH_DB`), settings
//! folder and studio home whose `envs/` links to this machine's framework
//! environments (so registering one changes nothing outside the scratch),
//! the block's lines in document order (later lines name the runs of earlier
//! ones by id), and `TRAINBENCH_EXAMPLE_STEPS` keeping every run short. Each
//! must exit 0 and, where its comment has `→ TEXT`, print TEXT (on stdout or
//! stderr); `→ exit N, TEXT` documents another exit status. An example that
//! cannot run here is in `NOT_RUN` with its reason, one that runs with a
//! stated change in `SUBSTITUTED`; an entry of either that matches no
//! example fails the test, so both stay true to the docs.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use common::{real_worker, text, Scratch, TRAINBENCH};

/// The documents whose examples run, from the repository's root.
const DOCS: [&str; 2] = ["README.md", "docs/cli.md"];

/// The most steps each run of an example trains.
const EXAMPLE_STEPS: &str = "2";

/// `NAME=PATH` lines the docs use, and what `$NAME` is here.
const BINDINGS: [(&str, Program); 2] = [
    ("T=target/release/trainbench", Program::Studio),
    ("W=target/release/trainbench-worker-tch", Program::Worker),
];

#[derive(Clone, Copy)]
enum Program {
    Studio,
    Worker,
}

/// Commands that build or set up the machine rather than use the studio:
/// `make test` itself runs them (or their parts) before this test.
const SET_UP_PROGRAMS: [&str; 3] = ["make", "cargo", "source"];

/// An example not run here: in `file`, the one that starts with `command`
/// (with `whole_block`, every line of its block, which depend on it).
struct NotRun {
    file: &'static str,
    command: &'static str,
    whole_block: bool,
    reason: &'static str,
}

const NOT_RUN: [NotRun; 6] = [
    NotRun {
        file: "README.md",
        command: "$T env install jax",
        whole_block: false,
        reason: "installs JAX from PyPI (network, ~1 GB) into the environments this test shares with the machine; crates/cli/tests/versions.rs installs releases",
    },
    NotRun {
        file: "README.md",
        command: "$W quick",
        whole_block: false,
        reason: "trains the MNIST sample to 95 % (half a minute on 2 cores, and the worker reads no shortening); crates/engine-tch/tests/worker.rs runs it with --epochs 1",
    },
    NotRun {
        file: "docs/cli.md",
        command: "trainbench run --framework jax==0.6.2,jax==0.7.2",
        whole_block: true,
        reason: "installs two JAX releases from PyPI (network, ~1.5 GB); crates/cli/tests/versions.rs does the same",
    },
    NotRun {
        file: "docs/cli.md",
        command: "trainbench bisect --framework jax",
        whole_block: true,
        reason: "installs four JAX releases from PyPI and needs the planted slowdown its text describes; crates/cli/tests/bisect.rs plants it",
    },
    NotRun {
        file: "docs/cli.md",
        command: "trainbench gate --baseline-script base.py --candidate-script slow.py",
        whole_block: true,
        reason: "base.py and slow.py are described, not given; crates/cli/tests/gate.rs gates such scripts",
    },
    NotRun {
        file: "docs/cli.md",
        command: "trainbench run --framework tensorflow",
        whole_block: true,
        reason: "six TensorFlow worker starts (10-20 s each on 2 cores), over this test's time; crates/cli/tests/settings.rs sweeps TF_ENABLE_ONEDNN_OPTS",
    },
];

/// A change an example runs with: `from` replaced by what `to` gives.
struct Substituted {
    file: &'static str,
    from: &'static str,
    to: fn() -> String,
    reason: &'static str,
}

const SUBSTITUTED: [Substituted; 2] = [
    Substituted {
        file: "README.md",
        from: "/opt/torch112/bin/python",
        to: studio_pytorch_python,
        reason: "a placeholder for an older PyTorch's python: the studio's own PyTorch environment stands in",
    },
    Substituted {
        file: "README.md",
        from: r#""steps":50"#,
        to: || r#""steps":2"#.into(),
        reason: "the worker's own protocol, fed to it directly: TRAINBENCH_EXAMPLE_STEPS shortens the runs the studio plans, not this",
    },
];

/// The python of the studio's own PyTorch environment, found as the CLI
/// finds it.
fn studio_pytorch_python() -> String {
    let envs = trainbench_app::envs::list().unwrap();
    let torch = envs
        .iter()
        .find(|e| e.builtin && e.framework.to_string() == "pytorch")
        .unwrap();
    torch.python.display().to_string()
}

/// One example as the docs give it.
#[derive(Debug, Clone)]
struct Example {
    file: &'static str,
    /// 1-based line of the document where it starts.
    line: usize,
    /// Its fenced block's index in the document.
    block: usize,
    command: String,
    /// The `→ TEXT` of its comment.
    expect: Option<String>,
}

impl Example {
    fn place(&self) -> String {
        format!("{}:{}: `{}`", self.file, self.line, self.command)
    }
}

/// `line` split at its comment (a `#` after blank space, outside quotes).
fn split_comment(line: &str) -> (&str, Option<&str>) {
    let (mut single, mut double, mut prev_blank) = (false, false, true);
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev_blank => {
                return (line[..i].trim_end(), Some(&line[i + 1..]));
            }
            _ => {}
        }
        prev_blank = c.is_whitespace();
    }
    (line.trim_end(), None)
}

/// Every example of `doc` (its text), in document order.
fn examples(file: &'static str, doc: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let (mut fence, mut block): (Option<bool>, usize) = (None, 0);
    let mut pending: Option<(usize, String)> = None;
    for (n, raw) in doc.lines().enumerate() {
        let line = raw.trim_start();
        if let Some(info) = line.strip_prefix("```") {
            fence = match fence {
                None => Some(info.trim() == "sh"),
                Some(_) => {
                    block += 1;
                    None
                }
            };
            continue;
        }
        let Some(is_sh) = fence else { continue };
        let part = match pending.take() {
            Some((at, before)) => Some((at, format!("{before} {line}"))),
            None if is_sh && !line.is_empty() && !line.starts_with('#') => {
                Some((n + 1, line.to_owned()))
            }
            None => line.strip_prefix("$ ").map(|c| (n + 1, c.to_owned())),
        };
        let Some((at, whole)) = part else { continue };
        if let Some(before) = whole.strip_suffix('\\') {
            pending = Some((at, before.trim_end().to_owned()));
            continue;
        }
        let (command, comment) = split_comment(&whole);
        out.push(Example {
            file,
            line: at,
            block,
            command: command.to_owned(),
            expect: comment
                .and_then(|c| c.split_once('→'))
                .map(|(_, t)| t.trim().to_owned()),
        });
    }
    out
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn all_examples() -> Vec<Example> {
    DOCS.iter()
        .flat_map(|f| examples(f, &std::fs::read_to_string(repo_root().join(f)).unwrap()))
        .collect()
}

/// What the test does with an example.
enum Verdict {
    Bind,
    NotRun(String),
    /// The command as run, and why it differs from the docs' (if it does).
    Run(String, String),
}

fn verdict(e: &Example, dropped_blocks: &[Dropped]) -> Verdict {
    if BINDINGS.iter().any(|(b, _)| e.command == *b) {
        return Verdict::Bind;
    }
    let program = e.command.split_whitespace().next().unwrap_or("");
    if SET_UP_PROGRAMS.contains(&program) {
        return Verdict::NotRun(format!(
            "`{program}` builds or sets up the machine, not a studio command (make test runs it)"
        ));
    }
    if let Some(n) = NOT_RUN
        .iter()
        .find(|n| n.file == e.file && e.command.starts_with(n.command))
    {
        return Verdict::NotRun(n.reason.into());
    }
    if let Some((_, _, by)) = dropped_blocks
        .iter()
        .find(|(f, b, _)| *f == e.file && *b == e.block)
    {
        return Verdict::NotRun(format!("its block depends on `{by}`, not run"));
    }
    let mut command = e.command.clone();
    let mut why = Vec::new();
    for s in SUBSTITUTED
        .iter()
        .filter(|s| s.file == e.file && e.command.contains(s.from))
    {
        command = command.replace(s.from, &(s.to)());
        why.push(s.reason);
    }
    Verdict::Run(command, why.join("; "))
}

/// A block left out as a whole: its document, its index, and the command
/// of `NOT_RUN` it depends on.
type Dropped = (&'static str, usize, &'static str);

/// The blocks left out as a whole (`NOT_RUN`'s `whole_block`).
fn dropped_blocks(all: &[Example]) -> Vec<Dropped> {
    all.iter()
        .filter_map(|e| {
            NOT_RUN
                .iter()
                .find(|n| n.whole_block && n.file == e.file && e.command.starts_with(n.command))
                .map(|n| (e.file, e.block, n.command))
        })
        .collect()
}

#[test]
fn the_docs_examples_are_found_and_every_listed_exception_matches_one() {
    let all = all_examples();
    for file in DOCS {
        assert!(
            all.iter().filter(|e| e.file == file).count() >= 10,
            "{file}: too few examples found; did the block format change?"
        );
    }
    for n in &NOT_RUN {
        assert!(
            all.iter()
                .any(|e| e.file == n.file && e.command.starts_with(n.command)),
            "NOT_RUN names `{}` in {}, which no example there is any more: remove it",
            n.command,
            n.file
        );
    }
    for s in &SUBSTITUTED {
        assert!(
            all.iter()
                .any(|e| e.file == s.file && e.command.contains(s.from)),
            "SUBSTITUTED names `{}` in {}, which no example there holds any more: remove it",
            s.from,
            s.file
        );
    }
    let one = "$T run --data mnist --epochs 5 # settings: stops at 95 % → 95 %";
    assert_eq!(
        split_comment(one),
        (
            "$T run --data mnist --epochs 5",
            Some(" settings: stops at 95 % → 95 %")
        )
    );
    assert_eq!(documented(Some("exit 3, no GPU")), (3, Some("no GPU")));
    assert_eq!(documented(Some("exit 3")), (3, None));
    assert_eq!(documented(Some("exit sign")), (0, Some("exit sign")));
    assert_eq!(documented(None), (0, None));
    assert_eq!(
        split_comment("echo '# no' \"#\" x"),
        ("echo '# no' \"#\" x", None)
    );
}

/// A block's scratch: its directory, database, settings and studio home.
fn block_dir(n: usize) -> (Scratch, PathBuf) {
    let scratch = Scratch::new(&format!("doc-examples-{n}"));
    let home = scratch.0.join("home");
    std::fs::create_dir_all(home.join("envs")).unwrap();
    std::fs::create_dir_all(scratch.0.join("config")).unwrap();
    // This machine's environments (not the releases' folder, which an
    // example could change), linked into the scratch home.
    if let Ok(entries) = std::fs::read_dir(machine_home().join("envs")) {
        for e in entries.flatten().filter(|e| e.file_name() != "versions") {
            std::os::unix::fs::symlink(e.path(), home.join("envs").join(e.file_name())).unwrap();
        }
    }
    let bin = scratch.0.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(TRAINBENCH, bin.join("trainbench")).unwrap();
    (scratch, bin)
}

/// The studio home this machine's environments are in (as the CLI finds it).
fn machine_home() -> PathBuf {
    let var = |k| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("TRAINBENCH_HOME")
        .or_else(|| var("XDG_DATA_HOME").map(|d| d.join("trainbench")))
        .unwrap_or_else(|| var("HOME").unwrap().join(".local/share/trainbench"))
}

fn shell(dir: &Path, bin: &Path, bound: &[(String, PathBuf)], command: &str) -> Command {
    let mut c = Command::new("bash");
    c.args(["-o", "pipefail", "-c", command])
        .current_dir(dir)
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .env("TRAINBENCH_DB", dir.join("studio.sqlite"))
        .env("TRAINBENCH_HOME", dir.join("home"))
        .env("TRAINBENCH_CONFIG_DIR", dir.join("config"))
        .env("TRAINBENCH_EXAMPLE_STEPS", EXAMPLE_STEPS)
        .env("OMP_NUM_THREADS", "1")
        .env("TRAINBENCH_NO_NVML", "1")
        .env_remove("TRAINBENCH_WORKER_TCH");
    for (name, path) in bound {
        c.env(name, path);
    }
    c
}

/// A block's index, a line per example, and the failures.
type BlockResult = (usize, Vec<String>, Vec<String>);

/// The variable a binding example sets, its program here, and a line
/// saying so; `None` for any other example.
fn bind(e: &Example) -> Option<(String, PathBuf, String)> {
    let (_, p) = BINDINGS.iter().find(|(b, _)| e.command == *b)?;
    let name = e.command.split('=').next().unwrap().to_owned();
    let path = match p {
        Program::Studio => PathBuf::from(TRAINBENCH),
        Program::Worker => real_worker(),
    };
    let line = format!("bound   {}: ${name} is {}", e.place(), path.display());
    Some((name, path, line))
}

/// What one block's examples came to: a line each, and the failures.
/// `earlier` are the examples of its document before it.
fn run_block(
    n: usize,
    earlier: &[Example],
    block: &[Example],
    dropped: &[Dropped],
) -> (Vec<String>, Vec<String>) {
    let (scratch, bin) = block_dir(n);
    let (mut said, mut failed) = (Vec::new(), Vec::new());
    // What the document bound before this block, then what the block binds.
    let mut bound: Vec<(String, PathBuf)> = earlier
        .iter()
        .filter_map(|e| bind(e).map(|(name, path, _)| (name, path)))
        .collect();
    for e in block {
        match verdict(e, dropped) {
            Verdict::Bind => {
                let (name, path, line) = bind(e).unwrap();
                said.push(line);
                bound.push((name, path));
            }
            Verdict::NotRun(why) => said.push(format!("not run {}: {why}", e.place())),
            Verdict::Run(command, why) => {
                let started = Instant::now();
                let out = shell(&scratch.0, &bin, &bound, &command).output().unwrap();
                let took = started.elapsed();
                let changed = if command == e.command {
                    String::new()
                } else {
                    format!(" as `{command}` ({why})")
                };
                said.push(format!(
                    "ran     {}{changed} in {:.1} s",
                    e.place(),
                    took.as_secs_f64()
                ));
                if let Some(why) = failure(e, &out) {
                    failed.push(format!("{}{changed}: {why}\n{}", e.place(), text(&out)));
                }
            }
        }
    }
    (said, failed)
}

/// Why `out` is not what example `e` documents, if it is not.
fn failure(e: &Example, out: &Output) -> Option<String> {
    let (status, expect) = documented(e.expect.as_deref());
    if out.status.code() != Some(status) {
        return Some(format!("exited {:?}, expected {status}", out.status.code()));
    }
    let expect = expect?;
    let both = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (!both.contains(expect)).then(|| format!("its documented output `{expect}` is missing"))
}

/// What a `→` promises: `exit N` (optionally `, TEXT`) is an exit status
/// other than 0; any other text is printed (exit 0).
fn documented(expect: Option<&str>) -> (i32, Option<&str>) {
    let Some(rest) = expect.and_then(|t| t.strip_prefix("exit ")) else {
        return (0, expect);
    };
    let (code, text) = rest.split_once(", ").unwrap_or((rest, ""));
    match code.parse() {
        Ok(code) => (code, Some(text).filter(|t| !t.is_empty())),
        Err(_) => (0, expect),
    }
}

#[test]
fn every_example_in_the_readme_and_cli_md_runs_and_prints_what_its_comment_says() {
    let started = Instant::now();
    let all = all_examples();
    let dropped = dropped_blocks(&all);
    let mut blocks: Vec<Vec<Example>> = Vec::new();
    for e in &all {
        match blocks.last_mut() {
            Some(b) if b[0].file == e.file && b[0].block == e.block => b.push(e.clone()),
            _ => blocks.push(vec![e.clone()]),
        }
    }
    // Two blocks at a time (each its own studio), in document order.
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<BlockResult>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let n = next.fetch_add(1, Ordering::SeqCst);
                let Some(block) = blocks.get(n) else { break };
                let earlier: Vec<Example> = all
                    .iter()
                    .filter(|e| e.file == block[0].file && e.block < block[0].block)
                    .cloned()
                    .collect();
                let (said, failed) = run_block(n, &earlier, block, &dropped);
                results.lock().unwrap().push((n, said, failed));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| r.0);
    for (_, said, _) in &results {
        for line in said {
            println!("{line}");
        }
    }
    let failed: Vec<String> = results.into_iter().flat_map(|r| r.2).collect();
    println!(
        "{} examples in {:.1} s",
        all.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failed.is_empty(),
        "{} example(s) did not do what the docs say:\n\n{}",
        failed.len(),
        failed.join("\n\n")
    );
}

#[test]
fn a_shortened_run_says_so_and_records_it() {
    let scratch = Scratch::new("doc-examples-shortened");
    let run = |steps: &str, args: &[&str]| {
        common::trainbench(&scratch.0)
            .env("TRAINBENCH_EXAMPLE_STEPS", steps)
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(
        "3",
        &[
            "run",
            "--model",
            "resnet_mini",
            "--steps",
            "200",
            "--batch-size",
            "8",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("TRAINBENCH_EXAMPLE_STEPS=3: every run trains at most 3 step(s)"),
        "{stderr}"
    );
    let out = run("3", &["show", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let shortened = &v["provenance"]["shortened"];
    assert_eq!(shortened["steps_at_most"], 3, "{v}");
    assert_eq!(shortened["variable"], "TRAINBENCH_EXAMPLE_STEPS", "{v}");
    assert_eq!(v["spec"]["steps"], 3, "the stored spec is the run's: {v}");
    let out = run("0", &["run", "--model", "resnet_mini"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for word in ["TRAINBENCH_EXAMPLE_STEPS", "\"0\"", "a whole number ≥ 1"] {
        assert!(stderr.contains(word), "{word:?} in {stderr}");
    }
}
