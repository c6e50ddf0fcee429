//! A newcomer's first two runs, for both front ends: the quick benchmark (a
//! small CNN on the MNIST sample until 95 % of the held-out digits are
//! right), and the second run that turns it into a comparison — the same
//! model in another installed framework, else at another precision.

use serde::Serialize;
use trainbench_core::Framework;

use crate::frameworks::FrameworkChoice;
use crate::sweep::SweepRequest;

/// Epochs the quick benchmark may train: it stops at the target, which on
/// a CPU it reaches in about two (lr 2e-3, batch 64).
pub const QUICK_EPOCHS: i64 = 5;
/// The held-out accuracy the quick benchmark trains to.
pub const QUICK_TARGET: f64 = 0.95;
/// The quick benchmark's learning rate.
pub const QUICK_LR: f64 = 2e-3;

/// The frameworks the quick benchmark prefers, in order.
const PREFERRED: [Framework; 4] = [
    Framework::Tch,
    Framework::Pytorch,
    Framework::Jax,
    Framework::Tensorflow,
];

/// The first installed framework of `choices` in the studio's order of
/// preference (the studio's own environments, not ones registered by path).
fn first_installed(choices: &[FrameworkChoice], except: Option<&str>) -> Option<Framework> {
    PREFERRED.into_iter().find(|f| {
        Some(f.as_str()) != except && choices.iter().any(|c| c.installed && c.key == f.as_str())
    })
}

/// The quick benchmark: what `trainbench run` with no arguments runs —
/// `resnet_mini` on the MNIST sample, batch 64, fp32, until 95 % accuracy
/// (at most five epochs) — in the first installed framework (`tch` when
/// nothing is installed, so the plan says what is missing).
pub fn quick_benchmark(choices: &[FrameworkChoice]) -> SweepRequest {
    let framework = first_installed(choices, None).unwrap_or(Framework::Tch);
    SweepRequest {
        framework: vec![framework.to_string()],
        data: "mnist".into(),
        steps: None,
        epochs: Some(QUICK_EPOCHS),
        target_accuracy: Some(QUICK_TARGET),
        lr: Some(QUICK_LR),
        ..SweepRequest::default()
    }
}

/// A suggested next run and why it is worth running.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct NextRun {
    /// What the button says: "Run it in PyTorch (Python)".
    pub title: String,
    /// What the comparison will show, in a sentence.
    pub why: String,
    /// The run, ready to start: the first one with one setting changed.
    pub request: SweepRequest,
}

/// What comparing `from` with `to` shows, in a sentence.
fn framework_why(from: Framework, to: Framework) -> String {
    match (from, to) {
        (Framework::Tch, Framework::Pytorch) | (Framework::Pytorch, Framework::Tch) => {
            "Both drive the same libtorch kernels: the comparison shows what the language around them — Python's training loop or Rust's — costs or saves.".into()
        }
        _ => format!(
            "The same model, data and settings in {} and {}: the comparison shows which trains faster here, with how sure the difference is.",
            from.title(),
            to.title()
        ),
    }
}

/// The run that makes `first` (a single configuration) a comparison: the
/// same settings in another installed framework (PyTorch from Python after
/// `tch`, `tch` after PyTorch, else the first installed), else bf16 mixed
/// precision instead of fp32. None when `first` is not one configuration or
/// neither change applies.
pub fn suggest_next(first: &SweepRequest, choices: &[FrameworkChoice]) -> Option<NextRun> {
    let [framework] = first.framework.as_slice() else {
        return None;
    };
    let [precision] = first.precision.as_slice() else {
        return None;
    };
    let current = Framework::parse(framework.split('@').next().unwrap_or(framework)).ok()?;
    let partner = match current {
        Framework::Tch => Some(Framework::Pytorch),
        Framework::Pytorch => Some(Framework::Tch),
        _ => None,
    }
    .filter(|p| choices.iter().any(|c| c.installed && c.key == p.as_str()))
    .or_else(|| first_installed(choices, Some(framework.as_str())));
    if let Some(other) = partner {
        return Some(NextRun {
            title: format!("Run it in {}", other.title()),
            why: framework_why(current, other),
            request: SweepRequest {
                framework: vec![other.to_string()],
                ..first.clone()
            },
        });
    }
    (precision == "fp32").then(|| NextRun {
        title: "Run it in bf16 mixed precision".into(),
        why: "The same run with matrix products in 16-bit bfloat (amp-bf16): the comparison shows what lower precision changes in speed, memory and accuracy on this machine.".into(),
        request: SweepRequest {
            precision: vec!["amp-bf16".into()],
            ..first.clone()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(key: &str, installed: bool) -> FrameworkChoice {
        let framework = Framework::parse(key.split('@').next().unwrap()).unwrap();
        FrameworkChoice {
            key: key.into(),
            framework,
            title: framework.title().into(),
            installed,
            version: None,
            environment: None,
            problem: None,
            installable: true,
        }
    }

    #[test]
    fn the_quick_benchmark_is_the_clis_default_in_the_first_installed_framework() {
        let q = quick_benchmark(&[choice("tch", true), choice("pytorch", true)]);
        assert_eq!(q.framework, ["tch"]);
        assert_eq!(
            (q.data.as_str(), q.epochs, q.steps),
            ("mnist", Some(5), None)
        );
        assert_eq!(q.target_accuracy, Some(0.95));
        let q = quick_benchmark(&[choice("tch", false), choice("jax", true)]);
        assert_eq!(q.framework, ["jax"]);
        let q = quick_benchmark(&[]);
        assert_eq!(
            q.framework,
            ["tch"],
            "nothing installed: the plan names what is missing"
        );
    }

    #[test]
    fn the_second_run_changes_the_framework_when_another_is_installed() {
        let q = quick_benchmark(&[choice("tch", true)]);
        let all = [
            choice("tch", true),
            choice("pytorch", true),
            choice("jax", true),
        ];
        let next = suggest_next(&q, &all).unwrap();
        assert_eq!(next.request.framework, ["pytorch"]);
        assert_eq!(next.request.precision, q.precision, "one setting changes");
        assert_eq!(next.request.data, "mnist");
        assert!(next.why.contains("libtorch"), "{}", next.why);
        // From JAX: PyTorch's partner rule does not apply; the first installed other.
        let jax = SweepRequest {
            framework: vec!["jax".into()],
            ..q.clone()
        };
        assert_eq!(suggest_next(&jax, &all).unwrap().request.framework, ["tch"]);
    }

    #[test]
    fn with_one_framework_the_second_run_changes_the_precision() {
        let q = quick_benchmark(&[choice("tch", true)]);
        let next = suggest_next(&q, &[choice("tch", true), choice("pytorch", false)]).unwrap();
        assert_eq!(next.request.framework, ["tch"]);
        assert_eq!(next.request.precision, ["amp-bf16"]);
        let bf16 = next.request;
        assert_eq!(suggest_next(&bf16, &[choice("tch", true)]), None);
        let sweep = SweepRequest {
            framework: vec!["tch".into(), "jax".into()],
            ..q
        };
        assert_eq!(
            suggest_next(&sweep, &[choice("tch", true)]),
            None,
            "a sweep is a comparison already"
        );
    }
}
