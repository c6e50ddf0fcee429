//! `trainbench host add --env`: a host's variables are exported before
//! every command there, and so reach every worker it starts. Through the
//! real CLI: one that loads code (`LD_PRELOAD`, `PYTHONSTARTUP`, NCCL's
//! plug-ins) or, of the frameworks' families, breaks the rules of
//! `run --env` is refused naming `env`, before anything connects and with
//! nothing saved; a host's own setting with a path (`SLURM_CONF`) passes.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

mod common;

use common::{output_json, text, trainbench, Scratch};

#[test]
fn host_variables_that_load_code_are_refused_naming_env() {
    let scratch = Scratch::new("host-env");
    let home = scratch.0.join("home");
    let add = |var: &str| {
        output_json(
            trainbench(&scratch.0)
                .env("TRAINBENCH_HOME", &home)
                .args(["host", "add", "box", "ssh://me@127.0.0.1:9"])
                .args(["--env", var, "--json"]),
        )
    };
    for (var, says) in [
        (
            "LD_PRELOAD=/tmp/evil.so",
            "env = LD_PRELOAD=/tmp/evil.so is not allowed: expected none of the variables that load code or write files (LD_PRELOAD: the dynamic loader loads the libraries it names into every program): the host exports it into every run there",
        ),
        ("PYTHONSTARTUP=/tmp/x.py", "PYTHONSTARTUP: Python runs the file it names"),
        ("NCCL_NET_PLUGIN=evil", "NCCL_NET_PLUGIN: NCCL loads the library it names"),
        ("TORCHINDUCTOR_CACHE_DIR=/tmp/c", "no variable whose name takes a place"),
    ] {
        let (out, v) = add(var);
        assert_eq!(out.status.code(), Some(2), "{var}: {}", text(&out));
        assert_eq!(v["error"]["field"], "env", "{var}: {v}");
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{var}: {message}");
    }
    assert!(!home.join("hosts.json").exists(), "no host was saved");

    // A host's own setting, a path in its value, passes the variables'
    // check: what stops this one is the host, which is not there.
    let (out, v) = add("SLURM_CONF=/etc/slurm/other.conf");
    assert!(!out.status.success(), "{}", text(&out));
    assert_ne!(v["error"]["field"], "env", "{v}");
}
