//! The runner driving a real Python worker into a real SQLite store, for the
//! checks the CLI's validation would otherwise stop before a worker starts:
//! the worker's own refusal of a precision must still end as a stored run.
#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use trainbench_core::protocol::Event;
use trainbench_core::spec::CheckedSpec;
use trainbench_core::summary::RunStatus;
use trainbench_core::Framework;
use trainbench_probe::GpuProbe;
use trainbench_runner::{envs, Progress, Runner, RunnerOptions};
use trainbench_store::{NewRun, Store};

struct Quiet;

impl Progress for Quiet {
    fn event(&mut self, _run_id: i64, _event: &Event) {}
}

fn queue(store: &Store, framework: Framework, spec: &CheckedSpec) -> i64 {
    store
        .insert_run(&NewRun::of_spec(framework, None, spec))
        .unwrap()
}

#[test]
fn a_precision_the_worker_refuses_is_a_stored_unsupported_run() {
    let dir = std::env::temp_dir().join(format!("trainbench-runner-py-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut store = Store::open(&dir.join("s.sqlite")).unwrap();
    let gpu = GpuProbe::open();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // amp-fp16 on the CPU: the CLI refuses it up front; a worker asked anyway
    // (or a GPU without the support) must refuse it itself, with the reason.
    for framework in Framework::PYTHON {
        let env = envs::resolve(framework, None)
            .unwrap_or_else(|e| panic!("{e} — run `make setup` to install every framework"));
        let spec = serde_json::json!({"model": "resnet_mini", "precision": "amp-fp16", "batch_size": 4, "steps": 2});
        let spec = CheckedSpec::new(serde_json::from_value(spec).unwrap()).unwrap();
        let id = queue(&store, framework, &spec);
        let (_, cancel) = tokio::sync::watch::channel(false);
        let runner = Runner {
            worker: envs::worker_command(&env),
            gpu: &gpu,
            opts: RunnerOptions::default(),
        };
        let outcome = rt
            .block_on(runner.run(&mut store, id, &spec, &mut Quiet, cancel))
            .unwrap();
        assert_eq!(outcome.status, RunStatus::Failed, "{framework}");
        assert_eq!(
            outcome.error_class.as_deref(),
            Some("unsupported"),
            "{framework}: {outcome:?}"
        );
        let reason = outcome.reason.unwrap();
        assert!(reason.contains("amp-fp16"), "{framework}: {reason}");
        let row = store.run_row(id).unwrap();
        assert_eq!(row.status, RunStatus::Failed);
        assert_eq!(row.exit_code, Some(3), "{framework}: unsupported exits 3");
        assert!(row.status_reason.unwrap().contains("amp-fp16"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
