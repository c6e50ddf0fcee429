//! What the studio notes of how a run was made beside the machine's facts
//! in its provenance (`shortened`: a run capped in steps), kept when the run
//! starts and its provenance is written.

use rusqlite::{params, OptionalExtension};
use serde_json::Value;

use crate::{Result, Store};

impl Store {
    /// Sets `key` of run `id`'s provenance to `value`, the rest kept (before
    /// the run starts too: `start_run` keeps it).
    pub fn note_provenance(&self, id: i64, key: &str, value: &Value) -> Result<()> {
        self.conn.execute(
            "UPDATE runs SET provenance_json = json_set(CASE WHEN json_valid(provenance_json) THEN provenance_json ELSE '{}' END, '$.' || ?2, json(?3)) WHERE id = ?1",
            params![id, key, value.to_string()],
        )?;
        Ok(())
    }

    /// `provenance` with the keys run `id`'s stored provenance has and it
    /// has not.
    pub(crate) fn with_noted_provenance(&self, id: i64, provenance: &Value) -> Result<Value> {
        let stored: Option<String> = self
            .conn
            .query_row(
                "SELECT provenance_json FROM runs WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        let mut merged = provenance.clone();
        let noted = stored.and_then(|s| serde_json::from_str::<Value>(&s).ok());
        if let (Some(Value::Object(noted)), Value::Object(m)) = (noted, &mut merged) {
            for (k, v) in noted {
                m.entry(k).or_insert(v);
            }
        }
        Ok(merged)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a test fails loudly")]
mod tests {
    use serde_json::json;

    use crate::fixtures::{write_run, FixtureRun};
    use crate::Store;

    #[test]
    fn a_key_noted_before_the_run_starts_is_kept_beside_the_machines_facts() {
        let mut store = Store::open_in_memory().unwrap();
        let id = write_run(&mut store, &FixtureRun::default()).unwrap();
        store
            .note_provenance(id, "shortened", &json!({"steps_at_most": 2}))
            .unwrap();
        store
            .start_run(id, &json!({"hostname": "h", "cuda_driver": null}))
            .unwrap();
        let p = store.run_detail(id).unwrap().provenance.unwrap();
        assert_eq!(p["shortened"]["steps_at_most"], 2, "{p}");
        assert_eq!(p["hostname"], "h", "{p}");
        assert!(p.as_object().unwrap().contains_key("cuda_driver"), "{p}");
    }
}
