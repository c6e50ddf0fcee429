//! The studio's words, explained once: the app shows them as tooltips and
//! on its Glossary page, `trainbench glossary` prints them, and
//! `docs/glossary.md` is this list written out ([`markdown`]; a test keeps
//! the file equal to it).

use serde::Serialize;

/// One term as a person meets it on screen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Term {
    /// What the UI looks the term up by: a precision (`amp-bf16`), a compile
    /// mode (`compile:on`), a badge (its check kind, `input_bound`), a word.
    pub key: &'static str,
    /// The term as shown.
    pub term: &'static str,
    /// What it means, in a sentence or three.
    pub meaning: &'static str,
}

const fn t(key: &'static str, term: &'static str, meaning: &'static str) -> Term {
    Term { key, term, meaning }
}

/// Every term, in the order the glossary lists them.
pub const GLOSSARY: &[Term] = &[
    // Frameworks and how they run.
    t("tch", "tch", "PyTorch driven from Rust: the studio's own worker calls libtorch, PyTorch's C++ core, through the tch crate. No Python runs, so it shows what the training loop around the same kernels costs in Python."),
    t("pytorch", "PyTorch (Python)", "PyTorch as its users write it in Python: eager mode, or compiled with torch.compile."),
    t("tensorflow", "TensorFlow", "TensorFlow with Keras layers and a tf.function training step; XLA on request."),
    t("jax", "JAX", "JAX with Flax for the model and Optax for the optimizer; the training step is compiled by XLA through jax.jit."),
    t("compile:off", "compile off", "The framework's default: PyTorch runs eagerly, op by op; TensorFlow traces a graph with tf.function; JAX compiles with jax.jit."),
    t("compile:on", "torch.compile", "PyTorch compiles the model into fused kernels (TorchInductor) on the first steps; later steps run faster, the first much slower."),
    t("compile:max-autotune", "max-autotune", "torch.compile's slowest-to-compile mode: it times several kernel variants and keeps the fastest."),
    t("compile:xla", "XLA", "Accelerated Linear Algebra, the compiler behind JAX and TensorFlow's jit_compile=True: it fuses the whole training step into a few kernels."),
    // Precisions.
    t("fp32", "fp32", "32-bit floating point for every value: the reference precision."),
    t("tf32", "tf32", "fp32 values, but matrix products on NVIDIA tensor cores with a 10-bit mantissa: much faster on A100/H100 GPUs, tiny rounding differences. GPU only."),
    t("amp-bf16", "amp-bf16", "Automatic mixed precision in bfloat16: matrix products and convolutions in 16-bit bfloat, weights kept in fp32. Same range as fp32, no loss scaling needed."),
    t("amp-fp16", "amp-fp16", "Automatic mixed precision in float16: like amp-bf16 but with a smaller range, so the loss is scaled up to keep small gradients from vanishing. GPU only."),
    // Running on several devices.
    t("data-parallel", "data parallel", "Each device holds a full copy of the model and trains on its own share of every batch; gradients are averaged across devices after each backward pass (PyTorch DDP, tf.distribute, JAX sharding)."),
    t("fsdp", "FSDP", "Fully Sharded Data Parallel (PyTorch): like data parallel, but parameters, gradients and optimizer state are split across the devices, so larger models fit, at the cost of more communication."),
    t("scaling", "scaling efficiency", "Throughput on N devices ÷ (N × throughput on one device): 100 % means every added device helps fully."),
    // How figures are measured.
    t("window", "window", "A stretch of consecutive training steps timed between two device synchronisations; its throughput is samples ÷ seconds."),
    t("warm-up", "warm-up", "The first windows of a run, while caches, allocators and compilers settle; they are left out of the throughput. When a run has at least 3 windows, the first is warm-up, and further ones while they run below 90 % of the median of the run's second half (at most half the windows); with fewer windows, none is."),
    t("steady", "steady windows", "The windows after warm-up. A run's throughput is their median."),
    t("first-step", "time to first step", "From the start of training to the end of step 1: model building on the device, compilation and the first batch."),
    t("how-sure", "how sure", "Each throughput comes with a 95 % interval. A difference between two runs is called clear when the interval of their ratio excludes 1; otherwise the studio says how many runs would tell them apart."),
    t("repeats", "repeats", "The same configuration run several times, interleaved with the others, so the spread from run to run is measured, not guessed."),
    t("baseline", "baseline", "The entry a comparison measures the others against: speed-ups and deltas are relative to it."),
    // The figures.
    t("throughput", "throughput", "Training samples per second in the steady windows (tokens per second too for text models), summed over every device of the run."),
    t("allocator", "allocator memory", "The most the framework held for tensors on the device at once (its allocator's peak). What a model and batch really need."),
    t("process", "process memory", "The worker process's peak resident memory (RSS): the framework, libraries and Python included. What a CPU run reports."),
    t("time-to-accuracy", "time to accuracy", "Wall time from the start of training until the held-out accuracy first reached the target; evaluation time included."),
    t("cost-per-epoch", "cost per epoch", "The time one pass over the data set takes at the measured throughput, times the hourly price you chose. Projected, and marked so, when the run did not train a whole epoch."),
    t("energy", "energy per sample", "The GPU's energy counter over the steady windows ÷ the samples trained in them (joules). Not measured on a CPU."),
    t("mfu", "MFU", "Model FLOPs utilisation: the arithmetic the model needs per sample × throughput ÷ the device's peak arithmetic at that precision. 40 % is good for a large transformer; small models and CPUs score far lower."),
    t("flops", "FLOPs per sample", "Floating-point operations one training sample costs (forward and backward), counted from the model's shape."),
    t("breakdown", "step breakdown", "Where a step's time goes — data, forward, backward, optimizer — measured on extra steps after the timed ones, so the throughput is not disturbed."),
    t("synthetic", "synthetic data", "Random tensors made once in memory: the benchmark then measures training alone, no data loading."),
    // The badges: the checks every run carries.
    t("finite_loss", "loss finite", "Badge: the loss never became NaN or infinite."),
    t("window_spread", "windows steady", "Badge: the steady windows' throughput varies by at most 15 % (coefficient of variation). More spread means a busy or unstable machine."),
    t("gpu_throttle", "GPU not throttled", "Badge: the GPU reported no power, thermal or hardware slowdown during the steady windows."),
    t("gpu_shared", "GPU not shared", "Badge: no other process computed on the run's GPUs during the steady windows."),
    t("mfu_range", "MFU in (0, 1]", "Badge: the MFU is possible; outside that range the FLOP count, the throughput or the peak is wrong."),
    t("input_bound", "not input-bound", "Badge: loading data takes less time per step than computing; otherwise a faster GPU would not help."),
    t("recompiles", "no recompilation", "Badge: the training step was not compiled again after step 1 (a recompiling step is slowed by its compiler)."),
    // The studio's own words.
    t("sweep", "sweep", "Several values for a setting (two frameworks, three batch sizes…): the studio runs every combination."),
    t("session", "session", "A saved comparison: the runs, the baseline, the grouping and the charts chosen. Sessions can be exported to a file and imported on another machine."),
];

/// The term under `key` (case-insensitive, the shown term matches too).
pub fn find(key: &str) -> Option<&'static Term> {
    let key = key.trim();
    GLOSSARY
        .iter()
        .find(|t| t.key.eq_ignore_ascii_case(key) || t.term.eq_ignore_ascii_case(key))
}

/// The glossary as `docs/glossary.md` holds it.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Glossary\n\nThe words the studio uses, as the app explains them in its tooltips and on its Glossary page (`trainbench glossary` prints the same). How each figure is computed, in detail: [metrics.md](metrics.md).\n\n",
    );
    for t in GLOSSARY {
        out.push_str(&format!("**{}** — {}\n\n", t.term, t.meaning));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use trainbench_core::spec::{Compile, Precision};

    #[test]
    fn every_precision_compile_mode_and_badge_is_explained() {
        for p in Precision::ALL {
            assert!(find(p.as_str()).is_some(), "precision {}", p.as_str());
        }
        for c in Compile::ALL {
            assert!(
                find(&format!("compile:{}", c.as_str())).is_some(),
                "compile {}",
                c.as_str()
            );
        }
        for k in trainbench_core::checks::CheckKind::ALL {
            assert_eq!(
                find(k.as_str()).map(|t| t.term),
                Some(k.label()),
                "badge {}",
                k.as_str()
            );
        }
    }

    #[test]
    fn keys_are_unique_and_found_by_either_word() {
        let mut keys: Vec<_> = GLOSSARY.iter().map(|t| t.key).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), GLOSSARY.len());
        assert_eq!(find("MFU").unwrap().key, "mfu");
        assert_eq!(find("torch.compile").unwrap().key, "compile:on");
        assert!(find("nonsense").is_none());
    }

    /// The glossary says the warm-up rule `show` and metrics.md say, and
    /// the one the studio applies: no warm-up under 3 windows.
    #[test]
    fn warm_up_says_the_rule_applied() {
        use trainbench_core::stats::{warmup_windows, WARMUP_RULE};
        let meaning = find("warm-up").unwrap().meaning;
        assert!(!meaning.contains("always"), "{meaning}");
        assert!(WARMUP_RULE.contains("at least 3 windows"));
        assert!(meaning.contains("at least 3 windows"), "{meaning}");
        assert!(meaning.contains("at most half"), "{meaning}");
        assert_eq!(warmup_windows(&[50.0, 100.0]), 0);
        assert_eq!(warmup_windows(&[50.0, 100.0, 100.0]), 1);
    }

    #[test]
    fn docs_glossary_is_this_list() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/glossary.md");
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(path, markdown()).unwrap();
        }
        let file = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            file == markdown(),
            "docs/glossary.md differs from trainbench_app::glossary: rewrite it with UPDATE_DOCS=1 cargo test -p trainbench-app glossary"
        );
    }
}
