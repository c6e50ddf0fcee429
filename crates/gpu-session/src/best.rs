//! The best single configuration measured before a search: among the
//! studio items of this session and of the record's sessions on a GPU of
//! the same name, those that ran the search's model at its precision and
//! input size (from files on disk, not an image folder), the fastest. At
//! one model, precision and input size the floating-point work per sample
//! is the same, so samples/s rank the items as MFU does and their ratio is
//! the ratio of their MFUs.

use serde::Serialize;
use serde_json::Value;

use super::tune_items::Space;

/// The configurations a search is held against: its model, precision and
/// input size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Key {
    pub model: String,
    pub precision: String,
    pub image_size: Option<i64>,
    pub seq_len: Option<i64>,
}

impl Key {
    pub fn of(space: &Space) -> Key {
        Key {
            model: space.model.clone(),
            precision: space.precision.clone(),
            image_size: space.image_size,
            seq_len: space.seq_len,
        }
    }

    /// Whether a studio item's `what` (as typed, or as stored in a results
    /// file) trains this configuration's model at its precision and size.
    fn matches(&self, what: &Value) -> bool {
        let int = |k: &str| what[k].as_i64();
        what["kind"] == "studio"
            && what["model"].as_str() == Some(self.model.as_str())
            && what["precision"].as_str() == Some(self.precision.as_str())
            && int("image_size") == self.image_size
            && int("seq_len") == self.seq_len
            && what["folder"].as_bool() != Some(true)
    }
}

/// One item's figures, and where it ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Best {
    pub item: String,
    /// When its session started (`None`: this session).
    pub session: Option<String>,
    pub samples_per_s: f64,
    pub mfu: Option<f64>,
    pub batch: Option<i64>,
}

impl Best {
    /// `vit-eager-max (2026-11-26 23:11 UTC)`, or `vit-eager-max (this session)`.
    pub fn words(&self) -> String {
        format!(
            "{} ({})",
            self.item,
            self.session.as_deref().unwrap_or("this session")
        )
    }
}

/// The faster of two.
pub fn faster(a: Option<Best>, b: Option<Best>) -> Option<Best> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.samples_per_s > a.samples_per_s {
            b
        } else {
            a
        }),
        (a, b) => a.or(b),
    }
}

/// The best of one session: its plan's items (`items`, as JSON) and their
/// results (as JSON); `session`: when it started, or `None` for this one.
pub fn best_of(
    key: &Key,
    items: &[Value],
    results: &[Value],
    session: Option<&str>,
) -> Option<Best> {
    let mut best = None;
    for r in results {
        let (Some(id), Some(rate)) = (r["id"].as_str(), r["samples_per_s"].as_f64()) else {
            continue;
        };
        let ran = r["status"] == "ran";
        let planned = items.iter().find(|i| i["id"].as_str() == Some(id));
        if !ran || !planned.is_some_and(|i| key.matches(&i["what"])) {
            continue;
        }
        let this = Best {
            item: id.to_owned(),
            session: session.map(str::to_owned),
            samples_per_s: rate,
            mfu: r["mfu"].as_f64(),
            batch: r["batch"].as_i64(),
        };
        best = faster(best, Some(this));
    }
    best
}

/// The best among the record's sessions (their results files) on a GPU
/// named `gpu`.
pub fn in_record(record: &[Value], gpu: &str, key: &Key) -> Option<Best> {
    record
        .iter()
        .filter(|doc| super::record::gpu_name(doc) == gpu)
        .map(|doc| {
            let empty = Vec::new();
            let items = doc["session"]["items"].as_array().unwrap_or(&empty);
            let results = doc["results"].as_array().unwrap_or(&empty);
            best_of(key, items, results, doc["session"]["started"].as_str())
        })
        .fold(None, faster)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn key() -> Key {
        Key {
            model: "vit_base_patch16_224".into(),
            precision: "amp-bf16".into(),
            image_size: None,
            seq_len: None,
        }
    }

    fn session(gpu: &str, started: &str, rows: &[(&str, &str, bool, &str, f64, f64)]) -> Value {
        let items: Vec<Value> = rows
            .iter()
            .map(|(id, precision, folder, _, _, _)| {
                json!({"id": id, "what": {"kind": "studio", "model": "vit_base_patch16_224",
                    "precision": precision, "image_size": null, "seq_len": null, "folder": folder}})
            })
            .collect();
        let results: Vec<Value> = rows
            .iter()
            .map(|(id, _, _, status, rate, mfu)| {
                json!({"id": id, "status": status, "samples_per_s": rate, "mfu": mfu, "batch": 64})
            })
            .collect();
        json!({"session": {"gpus": [{"name": gpu}], "started": started, "items": items}, "results": results})
    }

    #[test]
    fn the_fastest_that_ran_the_same_model_precision_and_size_on_that_gpu() {
        let h100 = "NVIDIA H100 80GB HBM3";
        let record = [
            session(
                h100,
                "2026-11-26 16:19 UTC",
                &[
                    ("vit-eager", "amp-bf16", false, "ran", 2023.0, 0.216),
                    ("vit-eager-max", "amp-bf16", false, "ran", 2540.0, 0.270),
                    // Another precision, an image folder, a run cut short:
                    // none of them is a single configuration of the key.
                    ("vit-eager-fp32", "fp32", false, "ran", 9000.0, 0.58),
                    ("vit-folder", "amp-bf16", true, "ran", 9000.0, 0.9),
                ],
            ),
            session(
                h100,
                "2026-11-26 23:11 UTC",
                &[
                    ("vit-eager-max", "amp-bf16", false, "ran", 2552.0, 0.271),
                    ("vit-tch", "amp-bf16", false, "cut", 9000.0, 0.9),
                ],
            ),
            session(
                "NVIDIA H200",
                "2026-11-27 04:58 UTC",
                &[("vit-eager-max", "amp-bf16", false, "ran", 2780.0, 0.295)],
            ),
        ];
        let best = in_record(&record, h100, &key()).unwrap();
        assert_eq!(best.item, "vit-eager-max");
        assert_eq!(best.session.as_deref(), Some("2026-11-26 23:11 UTC"));
        assert_eq!((best.samples_per_s, best.mfu), (2552.0, Some(0.271)));
        assert_eq!(best.words(), "vit-eager-max (2026-11-26 23:11 UTC)");
        let mut other = key();
        other.seq_len = Some(128);
        assert_eq!(in_record(&record, h100, &other), None);
        assert_eq!(in_record(&record, "NVIDIA A100-SXM4-80GB", &key()), None);
    }
}
