//! The worker plan's JSON Schema, made from [`WorkerPlan`] itself: the one
//! definition of what a Python worker is sent. It is committed beside the
//! workers (`workers/python/trainbench_worker/plan.schema.json`), which check
//! every plan against it before anything starts, and a test fails when the
//! committed file differs from a fresh one (`UPDATE_SCHEMA=1` rewrites it).

use schemars::generate::SchemaSettings;

use super::plan::WorkerPlan;

/// The schema as the worker receives plans: what serialising a plan gives
/// (fields skipped when empty are optional), draft 2020-12.
pub fn worker_plan_schema() -> serde_json::Value {
    let generator = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let schema = generator.into_root_schema_for::<WorkerPlan<'static>>();
    schema.to_value()
}

/// Fails when the schema committed at `path` differs from `fresh`, the
/// schema of the Rust type `of`; `UPDATE_SCHEMA=1` rewrites it first.
#[cfg(test)]
pub(crate) fn check_committed(path: &str, fresh: &serde_json::Value, of: &str) {
    let fresh = serde_json::to_string_pretty(fresh).unwrap() + "\n";
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == fresh,
        "{path} differs from the schema of {of}: run `UPDATE_SCHEMA=1 cargo test -p trainbench-core schema` and commit it"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMITTED: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../workers/python/trainbench_worker/plan.schema.json"
    );

    #[test]
    fn the_committed_schema_is_the_plans_own() {
        check_committed(COMMITTED, &worker_plan_schema(), "WorkerPlan");
    }

    #[test]
    fn the_schema_names_the_plans_fields() {
        let s = worker_plan_schema();
        let required: Vec<&str> = s["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        for field in ["protocol", "framework", "spec", "warmup", "breakdown"] {
            assert!(
                required.contains(&field),
                "{field} not required: {required:?}"
            );
        }
        assert!(!required.contains(&"profile"), "profile is optional");
    }
}
