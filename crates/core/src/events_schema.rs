//! The worker events' JSON Schema, made from [`Event`] itself: the one
//! definition of what a worker may print and the studio reads. It is
//! committed beside the workers
//! (`workers/python/trainbench_worker/events.schema.json`); the workers' unit
//! tests run a real worker and check every line it prints against it
//! (`tests/workers/test_events_schema.py`), and a test here fails when the
//! committed file differs from a fresh one (`UPDATE_SCHEMA=1` rewrites it).

use schemars::generate::SchemaSettings;

use crate::protocol::Event;

/// The schema of one event line as the studio reads it (what
/// deserialising accepts: fields with a default are optional), draft
/// 2020-12.
pub fn worker_events_schema() -> serde_json::Value {
    let generator = SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator();
    generator.into_root_schema_for::<Event>().to_value()
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMITTED: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../workers/python/trainbench_worker/events.schema.json"
    );

    #[test]
    fn the_committed_schema_is_the_events_own() {
        crate::spec::schema::check_committed(COMMITTED, &worker_events_schema(), "Event");
    }

    #[test]
    fn every_event_is_one_form_tagged_by_its_name() {
        let s = worker_events_schema();
        let forms = s["oneOf"].as_array().expect("one form per event");
        let mut tags: Vec<&str> = forms
            .iter()
            .filter_map(|f| f["properties"]["event"]["const"].as_str())
            .collect();
        tags.sort_unstable();
        assert_eq!(
            tags,
            [
                "breakdown",
                "done",
                "error",
                "eval",
                "first_step",
                "hello",
                "memory",
                "profile",
                "window"
            ]
        );
    }
}
