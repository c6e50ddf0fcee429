//! The operator profile reduction's tests: traces worked out by hand.
use super::*;
use serde_json::json;

fn x(name: &str, cat: &str, tid: u64, ts: f64, dur: f64) -> Value {
    json!({"ph": "X", "name": name, "cat": cat, "pid": 1, "tid": tid, "ts": ts, "dur": dur})
}

/// A category's self time in a profile.
fn category(p: &OperatorProfile, c: OpCategory) -> f64 {
    p.categories
        .iter()
        .find(|t| t.category == c)
        .map_or(0.0, |t| t.self_s)
}

/// A complete event tied to its launch by a correlation id (a kernel, a
/// copy, or the runtime call that launched it).
fn linked(name: &str, cat: &str, tid: u64, ts: f64, dur: f64, correlation: i64) -> Value {
    let mut e = x(name, cat, tid, ts, dur);
    e["args"] = json!({ "correlation": correlation });
    e
}

/// Self times, categories, the optimizer annotation and idle time of a
/// host trace, computed by hand: span 100 µs; linear 0–40 (mm 5–35 inside),
/// gelu 40–50, optimizer scope 60–90 (add_ 62–80 inside); busy 0–50 and
/// 60–90 = 80 µs.
#[test]
fn a_host_trace_reduces_to_self_times_by_hand() {
    let trace = json!({"traceEvents": [
        x(SPAN, "user_annotation", 7, 1000.0, 100.0),
        x("aten::linear", "cpu_op", 7, 1000.0, 40.0),
        x("aten::mm", "cpu_op", 7, 1005.0, 30.0),
        x("aten::gelu", "cpu_op", 7, 1040.0, 10.0),
        x(OPTIMIZER, "user_annotation", 7, 1060.0, 30.0),
        x("aten::add_", "cpu_op", 7, 1062.0, 18.0),
        x("outside", "cpu_op", 7, 2000.0, 50.0),
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "cpu"}},
    ]});
    let p = reduce_trace(&trace, 2, "t".into()).unwrap();
    assert_eq!(p.timeline, Some(ProfileTimeline::Host));
    assert!((p.span_s - 100e-6).abs() < 1e-12);
    assert!((p.busy_s - 80e-6).abs() < 1e-12, "{}", p.busy_s);
    assert!((p.idle_s - 20e-6).abs() < 1e-12);
    let cat = |c| category(&p, c);
    assert!((cat(OpCategory::MatmulConv) - 40e-6).abs() < 1e-12); // mm 30 + linear's own 10
    assert!((cat(OpCategory::NormElementwise) - 10e-6).abs() < 1e-12);
    assert!((cat(OpCategory::Optimizer) - 30e-6).abs() < 1e-12); // add_ 18 + scope's own 12
    assert_eq!(p.ops[0].name, "aten::mm");
    assert!(p
        .ops
        .iter()
        .any(|o| o.name == "[rust] trainbench.optimizer"));
    assert!(!p.ops.iter().any(|o| o.name == "outside"));
}

/// On a GPU the kernels are the timeline, named and categorised by the
/// operator whose runtime call launched them.
#[test]
fn device_kernels_take_their_launching_operator() {
    let launch = |c: i64, ts: f64| linked("cudaLaunchKernel", "cuda_runtime", 7, ts, 2.0, c);
    let trace = json!([
        x(SPAN, "user_annotation", 7, 1000.0, 100.0),
        x("aten::mm", "cpu_op", 7, 1001.0, 5.0),
        launch(5, 1002.0),
        x("aten::gelu", "cpu_op", 7, 1008.0, 5.0),
        launch(6, 1009.0),
        x(OPTIMIZER, "user_annotation", 7, 1050.0, 10.0),
        launch(7, 1051.0),
        linked("ampere_sgemm_128x64", "kernel", 20, 1010.0, 8.0, 5),
        linked(
            "vectorized_elementwise_kernel",
            "kernel",
            20,
            1020.0,
            4.0,
            6
        ),
        linked("multi_tensor_apply_kernel", "kernel", 20, 1070.0, 6.0, 7),
    ]);
    let p = reduce_trace(&trace, 1, "t".into()).unwrap();
    assert_eq!(p.timeline, Some(ProfileTimeline::Device));
    assert_eq!(p.ops[0].name, "aten::mm: ampere_sgemm_128x64");
    let cat = |c| category(&p, c);
    assert!((cat(OpCategory::MatmulConv) - 8e-6).abs() < 1e-12);
    assert!((cat(OpCategory::NormElementwise) - 4e-6).abs() < 1e-12);
    assert!((cat(OpCategory::Optimizer) - 6e-6).abs() < 1e-12);
    assert!((p.busy_s - 18e-6).abs() < 1e-12);
    assert!(!p.what.contains("several tracks"), "{}", p.what);
}

/// Two streams at once (a copy beside a GEMM): 10 µs of kernels in 8 µs
/// busy, each scaled by 0.8 so the categories add up to the busy time.
#[test]
fn kernels_on_two_streams_at_once_are_scaled_to_the_busy_time() {
    let trace = json!([
        x(SPAN, "user_annotation", 7, 1000.0, 100.0),
        x("aten::mm", "cpu_op", 7, 1001.0, 5.0),
        linked("cudaLaunchKernel", "cuda_runtime", 7, 1002.0, 1.0, 5),
        linked("cudaMemcpyAsync", "cuda_runtime", 7, 1003.0, 1.0, 6),
        linked("ampere_sgemm_128x64", "kernel", 20, 1010.0, 8.0, 5),
        linked("Memcpy HtoD", "gpu_memcpy", 21, 1010.0, 2.0, 6),
    ]);
    let p = reduce_trace(&trace, 1, "t".into()).unwrap();
    assert_eq!(p.timeline, Some(ProfileTimeline::Device));
    let total: f64 = p.categories.iter().map(|t| t.self_s).sum();
    assert!((p.busy_s - 8e-6).abs() < 1e-12, "{}", p.busy_s);
    assert!((total - 8e-6).abs() < 1e-12, "{total}");
    assert!((p.ops[0].self_s - 6.4e-6).abs() < 1e-12, "{:?}", p.ops);
    assert!(
        p.what.contains("summed to 1.25× the busy time"),
        "{}",
        p.what
    );
}

#[test]
fn names_fall_into_the_python_workers_categories() {
    for (name, c) in [
        ("aten::convolution_backward", OpCategory::MatmulConv),
        (
            "aten::_scaled_dot_product_flash_attention_for_cpu",
            OpCategory::Attention,
        ),
        ("aten::native_layer_norm", OpCategory::NormElementwise),
        ("aten::copy_", OpCategory::Memory),
        ("aten::to", OpCategory::Memory),
        ("aten::topk", OpCategory::NormElementwise),
        ("Memcpy HtoD (Pageable -> Device)", OpCategory::Memory),
        ("ncclDevKernel_AllReduce", OpCategory::Communication),
        (
            "autograd::engine::evaluate_function: AddBackward0",
            OpCategory::Other,
        ),
    ] {
        assert_eq!(category_of_name(name), c, "{name}");
    }
}

#[test]
fn the_scopes_are_the_names_the_reduction_looks_for() {
    assert_eq!(SPAN_SCOPE.to_str().unwrap(), SPAN);
    assert_eq!(OPTIMIZER_SCOPE.to_str().unwrap(), OPTIMIZER);
}

#[test]
fn a_trace_without_the_span_is_an_error() {
    let trace = json!({"traceEvents": [x("aten::mm", "cpu_op", 1, 0.0, 1.0)]});
    let err = reduce_trace(&trace, 1, "t".into()).unwrap_err();
    assert!(err.contains(SPAN), "{err}");
}
