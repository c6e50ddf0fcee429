//! The operator profile (protocol `profile`) of the libtorch
//! worker: libtorch's own Kineto profiler — the one `torch.profiler` drives —
//! switched on through the shim, its Chrome trace read back and reduced to
//! self time per operator and per category exactly as the Python workers'
//! `workers/python/trainbench_worker/profiling.py` reduces `torch.profiler`'s
//! (`torch_events` + `reduce` there; the two must categorise alike, so a
//! PyTorch-vs-tch comparison compares like with like).
//!
//! Self time: on one track (a host thread, or a device stream) complete events
//! nest; an event's self time is its duration less its direct children's. On
//! a device stream kernels do not nest, so a kernel's self time is its
//! duration. Idle: the profiled span less the union of the timeline's busy
//! time.

use std::collections::HashMap;
use std::ffi::CStr;

use serde_json::Value;
use trainbench_core::protocol::{
    CategoryTime, OpCategory, OpTime, OperatorProfile, OtherOps, ProfileTimeline,
};

/// The annotation around the profiled steps: its duration is the span.
pub const SPAN_SCOPE: &CStr = c"trainbench.profiled_steps";
/// The annotation around the optimizer update (libtorch's C++ optimizers
/// record none of their own, unlike Python's `Optimizer.step#…`).
pub const OPTIMIZER_SCOPE: &CStr = c"trainbench.optimizer";
const SPAN: &str = "trainbench.profiled_steps";
const OPTIMIZER: &str = "trainbench.optimizer";
/// Operators listed one by one; the rest are summed.
const TOP_OPS: usize = 25;

const COMM: &[&str] = &[
    "nccl",
    "all_reduce",
    "allreduce",
    "all_gather",
    "allgather",
    "reduce_scatter",
    "reducescatter",
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "collective-permute",
    "all-to-all",
    "c10d::",
    "gloo",
    "record_param_comms",
];
const ATTENTION: &[&str] = &[
    "flash",
    "fmha",
    "attention",
    "sdpa",
    "scaled_dot_product",
    "cudnn$fmha",
];
const MATMUL: &[&str] = &[
    "gemm",
    "matmul",
    "aten::mm",
    "aten::bmm",
    "aten::addmm",
    "aten::baddbmm",
    "aten::linear",
    "cublas",
    "cutlass",
    "xmma",
    "wgmma",
    "dot_general",
    "mkldnn_matmul",
    "onednn",
    "ynn_fusion",
];
const MEMORY: &[&str] = &[
    "memcpy",
    "memset",
    "aten::copy_",
    "aten::to",
    "aten::_to_copy",
    "aten::clone",
    "aten::contiguous",
    "copy-start",
    "copy-done",
    "dynamic-update-slice",
    "dynamic_update_slice",
];
const ELEMENTWISE_PREFIXES: &[&str] = &[
    "aten::",
    "void at::",
    "at::",
    "triton_",
    "cpp_fused",
    "fusion",
    "loop_",
    "input_",
    "wrapped_",
];

/// `conv(olution|olve|[123]d|_fwd|_bwd|_transpose)|cudnn|implicit_gemm`.
fn is_conv(n: &str) -> bool {
    if n.contains("cudnn") || n.contains("implicit_gemm") {
        return true;
    }
    n.match_indices("conv").any(|(i, _)| {
        let rest = &n[i + 4..];
        [
            "olution",
            "olve",
            "1d",
            "2d",
            "3d",
            "_fwd",
            "_bwd",
            "_transpose",
        ]
        .iter()
        .any(|s| rest.starts_with(s))
    })
}

/// A category from an operator's or kernel's name alone.
pub fn category_of_name(name: &str) -> OpCategory {
    let n = name.to_lowercase();
    if COMM.iter().any(|k| n.contains(k)) {
        return OpCategory::Communication;
    }
    if ATTENTION.iter().any(|k| n.contains(k)) {
        return OpCategory::Attention;
    }
    if MATMUL.iter().any(|k| n.contains(k)) || is_conv(&n) {
        return OpCategory::MatmulConv;
    }
    let memory_op = MEMORY.iter().any(|k| {
        n == *k
            || n.strip_prefix(k)
                .is_some_and(|r| r.starts_with(' ') || r.starts_with('('))
    });
    if memory_op || n.contains("memcpy") || n.contains("memset") || n.starts_with("copy") {
        return OpCategory::Memory;
    }
    if ELEMENTWISE_PREFIXES.iter().any(|p| n.starts_with(p))
        || [
            "fusion",
            "elementwise",
            "reduce",
            "norm",
            "softmax",
            "kernel",
        ]
        .iter()
        .any(|k| n.contains(k))
    {
        return OpCategory::NormElementwise;
    }
    OpCategory::Other
}

/// A complete (`ph == "X"`) trace event.
#[derive(Debug, Clone)]
struct Ev {
    track: (String, String),
    ts: f64,
    dur: f64,
    name: String,
    cat: String,
    correlation: Option<i64>,
    /// Self time, µs (set by [`self_times`]).
    self_us: f64,
    /// The enclosing event on the same track (index into the same list).
    parent: Option<usize>,
    category: OpCategory,
}

fn id_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

fn complete_events(trace: &Value) -> Vec<Ev> {
    let raw = trace
        .get("traceEvents")
        .and_then(Value::as_array)
        .or_else(|| trace.as_array());
    raw.into_iter()
        .flatten()
        .filter(|e| e.get("ph").and_then(Value::as_str) == Some("X"))
        .filter_map(|e| {
            Some(Ev {
                track: (id_text(e.get("pid")), id_text(e.get("tid"))),
                ts: e.get("ts")?.as_f64()?,
                dur: e.get("dur")?.as_f64()?,
                name: e
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_owned(),
                cat: e
                    .get("cat")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                correlation: e
                    .get("args")
                    .and_then(|a| a.get("correlation"))
                    .and_then(Value::as_i64),
                self_us: 0.0,
                parent: None,
                category: OpCategory::Other,
            })
        })
        .collect()
}

/// Sets `self_us` and `parent` on each event, nesting by time containment
/// within a track.
fn self_times(events: &mut [Ev]) {
    let mut tracks: HashMap<(String, String), Vec<usize>> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        tracks.entry(e.track.clone()).or_default().push(i);
    }
    for mut idx in tracks.into_values() {
        idx.sort_by(|&a, &b| {
            let (ea, eb) = (&events[a], &events[b]);
            ea.ts.total_cmp(&eb.ts).then(eb.dur.total_cmp(&ea.dur))
        });
        let mut stack: Vec<usize> = Vec::new();
        for i in idx {
            while let Some(&top) = stack.last() {
                if events[top].ts + events[top].dur <= events[i].ts {
                    stack.pop();
                } else {
                    break;
                }
            }
            events[i].self_us = events[i].dur;
            events[i].parent = stack.last().copied();
            if let Some(&top) = stack.last() {
                events[top].self_us -= events[i].dur;
            }
            stack.push(i);
        }
    }
    for e in events.iter_mut() {
        e.self_us = e.self_us.max(0.0);
    }
}

/// The union of the intervals' lengths, µs.
fn busy_us(mut spans: Vec<(f64, f64)>) -> f64 {
    spans.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut total = 0.0;
    let mut current: Option<(f64, f64)> = None;
    for (a, b) in spans {
        current = match current {
            Some((s, e)) if a <= e => Some((s, e.max(b))),
            Some((s, e)) => {
                total += e - s;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    total + current.map_or(0.0, |(s, e)| e - s)
}

fn in_optimizer(events: &[Ev], mut i: Option<usize>) -> bool {
    while let Some(k) = i {
        let n = &events[k].name;
        if n.starts_with("Optimizer.step#") || n.starts_with(OPTIMIZER) {
            return true;
        }
        i = events[k].parent;
    }
    false
}

/// The events a profile is made of, with their timeline and the span (s).
struct Timeline {
    events: Vec<Ev>,
    /// Indices of the events the profile counts.
    chosen: Vec<usize>,
    timeline: ProfileTimeline,
    span_s: f64,
}

/// Device kernels and copies when the trace has any (each named after the
/// host operator that launched it, matched by correlation id), else the
/// operators on the host's threads inside the span annotation.
fn torch_events(trace: &Value) -> Result<Timeline, String> {
    const HOST: &[&str] = &["cpu_op", "user_annotation"];
    const RUNTIME: &[&str] = &["cuda_runtime", "cuda_driver"];
    const DEVICE: &[&str] = &["kernel", "gpu_memcpy", "gpu_memset"];
    let all = complete_events(trace);
    let (mut events, device): (Vec<Ev>, Vec<Ev>) = all
        .into_iter()
        .filter(|e| {
            HOST.contains(&e.cat.as_str())
                || RUNTIME.contains(&e.cat.as_str())
                || DEVICE.contains(&e.cat.as_str())
        })
        .partition(|e| !DEVICE.contains(&e.cat.as_str()));
    self_times(&mut events);
    let span = events
        .iter()
        .position(|e| e.name == SPAN)
        .ok_or_else(|| format!("the trace has no {SPAN} annotation"))?;
    let (s0, s1) = (events[span].ts, events[span].ts + events[span].dur);
    let span_s = events[span].dur / 1e6;
    let host: Vec<usize> = (0..events.len())
        .filter(|&i| i != span && s0 <= events[i].ts && events[i].ts <= s1)
        .collect();
    for &i in &host {
        if events[i].parent == Some(span) {
            events[i].parent = None;
        }
    }
    if !device.is_empty() {
        let launcher: HashMap<i64, Option<usize>> = host
            .iter()
            .filter(|&&i| RUNTIME.contains(&events[i].cat.as_str()))
            .filter_map(|&i| events[i].correlation.map(|c| (c, events[i].parent)))
            .collect();
        let first = events.len();
        let mut renamed = Vec::with_capacity(device.len());
        for mut d in device {
            d.self_us = d.dur;
            d.parent = None;
            let op = d
                .correlation
                .and_then(|c| launcher.get(&c).copied().flatten());
            let by_kernel = category_of_name(&d.name);
            d.category = if in_optimizer(&events, op) {
                OpCategory::Optimizer
            } else if matches!(
                by_kernel,
                OpCategory::MatmulConv
                    | OpCategory::Attention
                    | OpCategory::Communication
                    | OpCategory::Memory
            ) {
                by_kernel
            } else {
                let c = match op {
                    Some(k) => category_of_name(&events[k].name),
                    None => by_kernel,
                };
                if c == OpCategory::Other {
                    OpCategory::NormElementwise
                } else {
                    c
                }
            };
            if let Some(k) = op {
                d.name = format!("{}: {}", events[k].name, d.name);
            }
            renamed.push(d);
        }
        events.extend(renamed);
        let chosen = (first..events.len()).collect();
        return Ok(Timeline {
            events,
            chosen,
            timeline: ProfileTimeline::Device,
            span_s,
        });
    }
    let chosen: Vec<usize> = host
        .into_iter()
        .filter(|&i| HOST.contains(&events[i].cat.as_str()))
        .collect();
    let categories: Vec<OpCategory> = chosen
        .iter()
        .map(|&i| {
            if in_optimizer(&events, Some(i)) {
                OpCategory::Optimizer
            } else if events[i].cat == "user_annotation" {
                OpCategory::Other
            } else {
                category_of_name(&events[i].name)
            }
        })
        .collect();
    for (&i, c) in chosen.iter().zip(categories) {
        events[i].category = c;
        if events[i].cat == "user_annotation" {
            // The annotation's own time: the worker's code between operators.
            events[i].name = format!("[rust] {}", events[i].name);
        }
    }
    Ok(Timeline {
        events,
        chosen,
        timeline: ProfileTimeline::Host,
        span_s,
    })
}

/// The protocol's `profile` event from a libtorch (Kineto) Chrome trace of
/// `steps` steps inside a [`SPAN`] annotation.
pub fn reduce_trace(trace: &Value, steps: u64, tool: String) -> Result<OperatorProfile, String> {
    let t = torch_events(trace)?;
    let busy_s = busy_us(
        t.chosen
            .iter()
            .map(|&i| &t.events[i])
            .filter(|e| e.parent.is_none())
            .map(|e| (e.ts, e.ts + e.dur))
            .collect(),
    )
    .min(t.span_s * 1e6)
        / 1e6;
    // Kernels on several streams at once sum to more self time than the
    // busy time: every figure is scaled by busy ÷ sum, as the Python
    // workers do (docs/metrics.md, "Categories").
    let summed = t.chosen.iter().map(|&i| t.events[i].self_us).sum::<f64>() / 1e6;
    let scale = if summed > busy_s && busy_s > 0.0 {
        busy_s / summed
    } else {
        1.0
    };
    let mut ops: Vec<((String, OpCategory), (f64, u64))> = Vec::new();
    let mut index: HashMap<(String, OpCategory), usize> = HashMap::new();
    let mut cats: HashMap<OpCategory, f64> = HashMap::new();
    for &i in &t.chosen {
        let e = &t.events[i];
        let key = (e.name.clone(), e.category);
        let k = *index.entry(key.clone()).or_insert_with(|| {
            ops.push((key, (0.0, 0)));
            ops.len() - 1
        });
        ops[k].1 .0 += e.self_us * scale;
        ops[k].1 .1 += 1;
        *cats.entry(e.category).or_default() += e.self_us * scale;
    }
    // Most self time first; ties in first-seen order (a stable sort).
    ops.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0));
    let rest = ops.split_off(ops.len().min(TOP_OPS));
    let what = match t.timeline {
        ProfileTimeline::Device => {
            "CUDA kernels and copies on the GPU, each named after the libtorch operator that launched it"
        }
        ProfileTimeline::Host => {
            "libtorch operators on the training thread (self time: less the operators they call)"
        }
    };
    let mut what = what.to_owned();
    if 1.0 / scale >= 1.005 {
        what.push_str(&format!(
            "; the operators' self times summed to {:.2}× the busy time (tracks at once, or work outside the profiled span), so each is scaled to it",
            1.0 / scale
        ));
    }
    Ok(OperatorProfile {
        tool,
        not_measured: None,
        steps,
        span_s: t.span_s,
        timeline: Some(t.timeline),
        what,
        ops: ops
            .into_iter()
            .filter(|(_, (s, _))| *s > 0.0)
            .map(|((name, category), (s, calls))| OpTime {
                name: name.chars().take(160).collect(),
                category,
                self_s: s / 1e6,
                calls,
            })
            .collect(),
        other_ops: OtherOps {
            count: rest.len() as u64,
            self_s: rest.iter().map(|(_, (s, _))| s).sum::<f64>() / 1e6,
        },
        categories: OpCategory::ALL
            .iter()
            .map(|&category| CategoryTime {
                category,
                self_s: cats.get(&category).copied().unwrap_or(0.0) / 1e6,
            })
            .collect(),
        busy_s,
        idle_s: (t.span_s - busy_s).max(0.0),
    })
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;
