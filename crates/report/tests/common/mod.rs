//! What the report tests share: an output folder, and runs stored in a real
//! SQLite file (three frameworks × 2 repeats, a 2-device run, a failed run
//! whose error text holds a formula, quotes and a line break).

use std::path::PathBuf;

use trainbench_core::record::RunDetail;
use trainbench_core::summary::RunStatus;
use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::Store;

pub fn out_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/test-output/report")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("output dir");
    dir
}

/// Three frameworks × 2 repeats, one 2-device run, and one failed run.
pub fn stored(dir: &std::path::Path) -> (Store, Vec<i64>) {
    let mut store = Store::open(&dir.join("runs.sqlite")).expect("open");
    let mut ids = Vec::new();
    for (k, fw) in [
        trainbench_core::Framework::Tch,
        trainbench_core::Framework::Pytorch,
        trainbench_core::Framework::Jax,
    ]
    .into_iter()
    .enumerate()
    {
        for rep in 0..2 {
            ids.push(
                write_run(
                    &mut store,
                    &FixtureRun {
                        framework: fw,
                        samples_per_s: 400.0 + 60.0 * k as f64,
                        seed: (k * 10 + rep) as u64,
                        ..Default::default()
                    },
                )
                .expect("fixture"),
            );
        }
    }
    ids.push(
        write_run(
            &mut store,
            &FixtureRun {
                devices: 2,
                samples_per_s: 700.0,
                seed: 99,
                ..Default::default()
            },
        )
        .expect("fixture"),
    );
    let failed = write_run(
        &mut store,
        &FixtureRun {
            framework: trainbench_core::Framework::Tensorflow,
            status: RunStatus::Failed,
            windows: 0,
            seed: 7,
            ..Default::default()
        },
    )
    .expect("fixture");
    store
        .finish_run(
            failed,
            RunStatus::Failed,
            Some("=HYPERLINK(\"http://x\"), with \"quotes\"\nand a line break"),
            Some("oom"),
            Some(1),
            "Traceback (most recent call last):\nResourceExhaustedError: OOM when allocating tensor",
        )
        .expect("finish");
    ids.push(failed);
    (store, ids)
}

pub fn details(store: &Store, ids: &[i64]) -> Vec<RunDetail> {
    ids.iter()
        .map(|id| store.run_detail(*id).expect("detail"))
        .collect()
}
