//! Operator profiles (checked on the runs of
//! `images::an_image_size_is_a_run_setting_for_every_image_model_in_every_framework`),
//! amp-bf16 on the CPU and every catalogue model's parameter count in every
//! framework.

use super::*;

/// The categories an operator profile of `model` must give time to.
fn expected_categories(model: &str) -> &'static [&'static str] {
    if model == "resnet_mini" {
        &["matmul_conv", "norm_elementwise", "optimizer"]
    } else {
        &["matmul_conv", "attention", "norm_elementwise", "optimizer"]
    }
}

fn category(p: &Value, c: &str) -> f64 {
    p["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["category"] == c)
        .map_or(0.0, |x| x["self_s"].as_f64().unwrap())
}

/// `--profile` on one run (`shown`: its `show --json`): a few steps after the
/// timed part under torch.profiler, libtorch's Kineto profiler (tch),
/// jax.profiler or TensorFlow's profiler, reduced to categories the model
/// really exercises.
pub(super) fn profile_as_expected(run: &Value, shown: &Value) {
    let (framework, model) = (&run["framework"], run["model"].as_str().unwrap());
    let p = &shown["profile"];
    let what = format!("{framework} {model}: {p}");
    assert!(p["not_measured"].is_null(), "{what}");
    assert_eq!(p["steps"], 3, "{what}");
    assert_eq!(p["timeline"], "host", "{what}");
    let span = p["span_s"].as_f64().unwrap();
    let (busy, idle) = (p["busy_s"].as_f64().unwrap(), p["idle_s"].as_f64().unwrap());
    assert!(span > 0.0 && busy > 0.0 && busy <= span, "{what}");
    assert!((busy + idle - span).abs() <= 1e-9 * span.max(1.0), "{what}");
    for c in expected_categories(model) {
        assert!(category(p, c) > 0.0, "{c} has no time: {what}");
    }
    // The categories' self times add up to the busy time: TensorFlow's
    // executor and XLA's CPU thunk executor (JAX) run independent
    // operators concurrently on several threads, whose summed self time
    // (seen: JAX 0.360 s in a 0.353 s span) the worker scales to it.
    let total: f64 = p["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["self_s"].as_f64().unwrap())
        .sum();
    assert!(
        (total - busy).abs() <= busy * 0.01,
        "{total} s of self time against {busy} s busy: {what}"
    );
    // Matrix products are the biggest single cost of these models on a CPU.
    let top = &p["ops"][0];
    assert!(top["self_s"].as_f64().unwrap() > 0.0, "{what}");
    let listed: Vec<f64> = p["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["self_s"].as_f64().unwrap())
        .collect();
    assert!(
        listed.windows(2).all(|w| w[0] >= w[1]),
        "ops not sorted: {what}"
    );
    if model == "resnet_mini" && (framework == "pytorch" || framework == "tch") {
        assert!(
            p["ops"].as_array().unwrap().iter().any(|o| o["name"]
                .as_str()
                .unwrap()
                .contains("convolution")
                && o["category"] == "matmul_conv"),
            "{what}"
        );
    }
    // The timed windows and the breakdown are there as in any run.
    assert!(!shown["summary"]["breakdown"].is_null(), "{what}");
}

/// The profiles of a sweep's runs (`runs`, every one with `--profile`, and
/// `twin`: the same configuration as the profiled PyTorch ResNet, without
/// it): the profile is kept out of the configuration's identity, `explain`
/// and `compare` set two ViT profiles side by side, and the libtorch
/// worker's profile names its tool and libtorch's operators.
pub(super) fn profiles_compared(home: &Home, runs: &[Value], twin: &Value) {
    let id = |framework: &str, model: &str| -> String {
        runs.iter()
            .find(|r| r["framework"] == framework && r["model"] == model)
            .unwrap_or_else(|| panic!("no {framework} {model} run among {runs:?}"))["id"]
            .to_string()
    };
    // The profile is not part of the configuration: a run without it is a repeat.
    let (_, plain) = home.run(&["show", &twin["id"].to_string(), "--json"]);
    let (_, profiled) = home.run(&["show", &id("pytorch", "resnet_mini"), "--json"]);
    assert_eq!(plain["config_key"], profiled["config_key"]);
    assert!(plain["profile"].is_null());
    assert!(!profiled["profile"].is_null());
    // explain compares the two ViT profiles category by category.
    let (torch_vit, jax_vit) = (
        id("pytorch", "vit_mini_patch4_32"),
        id("jax", "vit_mini_patch4_32"),
    );
    let (out, e) = home.run(&["explain", &torch_vit, &jax_vit, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let rows = e["profile"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8, "{e}");
    let gap: f64 = rows.iter().map(|r| r["gap_s"].as_f64().unwrap()).sum();
    assert!(
        (gap - e["profile"]["gap_s"].as_f64().unwrap()).abs() < 1e-12,
        "{e}"
    );
    // So does a comparison: each entry's profile per sample, and its gap to the baseline.
    let (out, c) = home.run(&["compare", &torch_vit, &jax_vit, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let c = if c["comparison"].is_null() {
        &c
    } else {
        &c["comparison"]
    };
    assert_eq!(
        c["entries"][0]["profile"]["rows"].as_array().unwrap().len(),
        8,
        "{c}"
    );
    let gaps = c["profile_gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 1, "{c}");
    assert_eq!(gaps[0]["entry"], 1);
    let verdict = gaps[0]["gap"]["verdict"].as_str().unwrap();
    assert!(verdict.contains("in the operator profiles"), "{verdict}");
    // The libtorch worker's profile names its tool and libtorch's operators.
    let (_, d) = home.run(&["show", &id("tch", "vit_mini_patch4_32"), "--json"]);
    let tool = d["profile"]["tool"].as_str().unwrap();
    assert!(
        tool.starts_with("libtorch profiler (Kineto, libtorch 2."),
        "{tool}"
    );
    assert!(
        d["profile"]["ops"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["name"].as_str().unwrap().starts_with("aten::")),
        "{}",
        d["profile"]
    );
}

/// bfloat16 autocast / mixed precision on the CPU in every Python framework.
#[test]
fn every_python_framework_trains_in_amp_bf16_on_the_cpu() {
    for framework in FRAMEWORKS {
        ready(framework);
    }
    let home = Home::new("bf16");
    let (out, v) = home.run(&[
        "run",
        "--framework",
        "pytorch,tensorflow,jax",
        "--precision",
        "amp-bf16",
        "--model",
        "vit_mini_patch4_32",
        "--batch-size",
        "8",
        "--steps",
        "12",
        "--window-steps",
        "3",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&home, &out, &v));
    for run in v["runs"].as_array().unwrap() {
        assert_eq!(run["status"], "completed", "{run}");
        assert_eq!(run["precision"], "amp-bf16");
        let (_, d) = home.run(&["show", &run["id"].to_string(), "--json"]);
        let words = d["hello"]["precision_in_effect"]
            .as_str()
            .unwrap()
            .to_lowercase();
        assert!(words.contains("bfloat16"), "{}: {words}", run["framework"]);
    }
}

fn counts(env: &envs::FrameworkEnv, configs: &[Value]) -> Vec<u64> {
    let mut child = Command::new(&env.python)
        .args(["-m", "trainbench_worker", env.framework.as_str(), "count"])
        .env("PYTHONPATH", envs::package_dir())
        .env("OMP_NUM_THREADS", "1")
        .env("TF_CPP_MIN_LOG_LEVEL", "2")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json!(configs).to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Parameter-count parity: every catalogue model, built by every framework,
/// has the core crate's count (which equals the reference implementations').
/// Every framework builds without allocating weights (PyTorch on the meta
/// device, TensorFlow in a stateless scope, JAX through eval_shape), so even
/// ViT-G (1.8 B) is counted in every framework on every run.
#[test]
fn every_framework_builds_every_model_with_the_catalogue_count() {
    for framework in FRAMEWORKS {
        let env = ready(framework);
        let (names, configs): (Vec<&str>, Vec<Value>) = model_names()
            .into_iter()
            .map(|n| (n, lookup(n).unwrap().default_config()))
            .map(|(n, c)| (n, serde_json::to_value(&c).unwrap()))
            .unzip();
        let got = counts(&env, &configs);
        for ((name, config), got) in names.iter().zip(&configs).zip(got) {
            let want = lookup(name)
                .unwrap()
                .config(&Default::default())
                .unwrap()
                .param_count();
            assert_eq!(got, want, "{framework} {name}: {config}");
        }
    }
}
