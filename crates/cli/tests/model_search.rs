//! Finding a model among the installed libraries' thousands: families from
//! the names, sizes counted by the real workers (PyTorch's meta device for
//! timm and transformers, keras for keras.applications) into a cache of
//! this test's own, and the filters narrowing what is listed.

mod common;

use common::{output_json, text, trainbench, Scratch};
use serde_json::{json, Value};

fn find(dir: &Scratch, args: &[&str]) -> Value {
    let (out, v) = output_json(
        trainbench(&dir.0)
            .env("XDG_CACHE_HOME", dir.0.join("cache"))
            .arg("models")
            .args(args)
            .arg("--json"),
    );
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
    v
}

fn named<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v["models"].as_array()?.iter().find(|m| m["name"] == name)
}

#[test]
fn library_models_are_found_by_family_and_by_size_once_counted() {
    let dir = Scratch::new("model-search");
    // Before counting: listed with their family, no size; a size filter
    // leaves them out and says how many.
    let sized = find(&dir, &["--search", "test_vit", "--size", "tiny"]);
    assert!(named(&sized, "timm:test_vit").is_none(), "{sized}");
    assert!(sized["not_counted"].as_u64().unwrap() >= 1, "{sized}");
    assert!(
        sized["families"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["family"] == "vision_transformer"),
        "{sized}"
    );

    names_are_kept_while_the_environment_is_unchanged(&dir);

    // Counted once (the real worker builds each on the meta device): the
    // count matches timm's own, and the filters apply.
    let counted = find(
        &dir,
        &["--search", "test_vit", "--size", "tiny", "--cpu", "--count"],
    );
    let vit = named(&counted, "timm:test_vit").expect("counted and tiny");
    assert_eq!(vit["params"], json!(371_240), "{vit}");
    assert_eq!(vit["cpu"], json!(true), "{vit}");
    assert_eq!(counted["not_counted"], json!(0), "{counted}");
    assert!(dir.0.join("cache/trainbench/model-sizes.json").is_file());
    // Kept: the next search lists the size without counting again, and the
    // family filter keeps that family only.
    let again = find(
        &dir,
        &["--search", "test_vit", "--family", "vision_transformer"],
    );
    let vit = named(&again, "timm:test_vit").expect("kept");
    assert_eq!(
        (vit["family"].clone(), vit["params"].clone()),
        (json!("vision_transformer"), json!(371_240))
    );
    assert!(again["models"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["family"] == "vision_transformer"));

    // A transformers decoder and a keras model, counted in their own environments.
    let gpt = find(
        &dir,
        &["--search", "gpt2", "--family", "decoder", "--count"],
    );
    let g = named(&gpt, "hf:gpt2").expect("hf:gpt2");
    assert_eq!(g["params"], json!(124_439_808), "{g}");
    assert_eq!(g["cpu"], json!(false), "{g}");
    let keras = find(&dir, &["--search", "MobileNetV3Small", "--count"]);
    let k = named(&keras, "keras:MobileNetV3Small").expect("keras");
    assert_eq!(
        (k["family"].clone(), k["params"].clone()),
        (json!("mobilenet_v3"), json!(2_554_968)),
        "{k}"
    );

    // The catalogue's own come first; a size nobody has is refused by name.
    let cpu = find(&dir, &["--cpu"]);
    assert!(
        cpu["models"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["source"] == "catalogue" && m["cpu"] == json!(true)),
        "{cpu}"
    );
    let (out, v) = output_json(trainbench(&dir.0).args(["models", "--size", "enormous", "--json"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["error"]["field"], "size", "{v}");
}

/// The first search kept every library name with its family; a name
/// planted in what was kept is found (no worker was asked), and once the
/// environment's fingerprint no longer matches, the worker is asked again
/// and the planted name is gone.
fn names_are_kept_while_the_environment_is_unchanged(dir: &Scratch) {
    let file = dir.0.join("cache/trainbench/model-names.json");
    let kept: Value =
        serde_json::from_slice(&std::fs::read(&file).expect("names kept")).expect("JSON");
    let (env, entry) = kept
        .as_object()
        .expect("as written")
        .iter()
        .find(|(_, e)| {
            e["names"]
                .as_array()
                .expect("as written")
                .contains(&json!("timm:test_vit"))
        })
        .expect("the PyTorch environment's names kept");
    assert_eq!(
        entry["families"]["timm:test_vit"], "vision_transformer",
        "{entry}"
    );
    let plant = |fingerprint: &Value| {
        let mut e = entry.clone();
        e["names"]
            .as_array_mut()
            .expect("as written")
            .push(json!("timm:planted_by_the_test"));
        e["families"]["timm:planted_by_the_test"] = json!("planted");
        e["fingerprint"] = fingerprint.clone();
        let mut all = kept.clone();
        all[env.as_str()] = e;
        std::fs::write(&file, serde_json::to_vec(&all).expect("JSON")).expect("planted");
    };
    plant(&entry["fingerprint"]);
    let found = find(dir, &["--search", "planted_by", "--family", "planted"]);
    assert_eq!(
        named(&found, "timm:planted_by_the_test").expect("kept names used")["family"],
        "planted"
    );
    plant(&json!("packages changed since"));
    let found = find(dir, &["--search", "planted_by", "--family", "planted"]);
    assert!(
        named(&found, "timm:planted_by_the_test").is_none(),
        "{found}"
    );
}
