//! A sweep's estimated duration, said before it runs, from the earlier runs
//! of its configurations on this machine (real tch runs on the CPU).

mod common;

use common::{text, Db};

fn estimate_line(out: &std::process::Output) -> Option<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .find(|l| l.starts_with("trainbench: estimated duration:"))
        .map(str::to_owned)
}

#[test]
fn a_configuration_run_before_is_estimated_and_a_new_one_is_not() {
    let db = Db::new("estimate");
    let args = [
        "run",
        "--model",
        "resnet_mini",
        "--steps",
        "30",
        "--batch-size",
        "8",
        "--window-steps",
        "5",
    ];
    let (first, _) = db.run(&args);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    assert_eq!(
        estimate_line(&first),
        None,
        "nothing to judge by yet: {}",
        text(&first)
    );

    // The same configuration twice as long, and one never run (batch 16).
    let (second, _) = db.run(&[
        "run",
        "--model",
        "resnet_mini",
        "--steps",
        "60",
        "--batch-size",
        "8,16",
        "--window-steps",
        "5",
    ]);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    let line = estimate_line(&second).unwrap_or_else(|| panic!("no estimate: {}", text(&second)));
    assert!(line.contains("about "), "{line}");
    assert!(line.contains("for 1 of 2 run(s)"), "{line}");
    assert!(line.contains("1 run(s) have no earlier run here"), "{line}");
}
