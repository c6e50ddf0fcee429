//! What a Python worker reads: the validated spec resolved into a plan.

use serde::Serialize;

use super::validate::{Length, RunSpec};
use crate::framework::Framework;
use crate::models::ModelTraits;
use crate::protocol::PROTOCOL_VERSION;

/// What a Python worker reads: the run specification with every default
/// resolved by this crate (so the catalogue, defaults and validation live in
/// one place), plus the analytical numbers its model must match. Its JSON
/// Schema ([`super::schema::worker_plan_schema`]) is what the worker checks
/// a plan against before it starts.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct WorkerPlan<'a> {
    pub protocol: u32,
    pub framework: Framework,
    pub spec: &'a RunSpec,
    /// Trainable parameters the model must have (the worker refuses to train
    /// otherwise); `null` for a library model, whose worker counts them.
    pub param_count: Option<u64>,
    /// Analytical training FLOPs per sample; `null` for a library model, whose
    /// worker counts them (and says how in its hello's `flops_method`).
    pub flops_per_sample: Option<f64>,
    /// What the workers do differently by model (input, objective,
    /// attention); `null` for a library or file model or a script, whose
    /// worker finds them when it builds the model.
    pub traits: Option<ModelTraits>,
    /// The learning-rate warm-up, resolved as far as this crate can
    /// ([`PlanWarmup::resolve`]); the worker has no default of its own.
    pub warmup: PlanWarmup,
    /// How many extra steps the step breakdown times after the timed part.
    pub breakdown: BreakdownRule,
    /// Present when the run asked for an operator profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileRule>,
    /// Name prefixes of the environment variables the worker states in its
    /// hello (`spec::env::ALLOWED_PREFIXES`), set by the run or inherited.
    pub setting_prefixes: &'static [&'static str],
}

/// The operator profile's length: one unprofiled step, then `steps` steps
/// under the profiler (after the breakdown). JSON: `{"steps": 3}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ProfileRule {
    pub steps: u64,
}

impl ProfileRule {
    pub const DEFAULT: ProfileRule = ProfileRule { steps: 3 };
}

/// The step breakdown's length: `clamp(steps_trained / divisor, min_steps,
/// max_steps)` whole steps and as many split steps (so at most 2 × 10 extra
/// steps: under 5 % of a 500-step run). JSON:
/// `{"divisor": 10, "min_steps": 3, "max_steps": 10}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct BreakdownRule {
    pub divisor: u64,
    pub min_steps: u64,
    pub max_steps: u64,
}

impl BreakdownRule {
    pub const DEFAULT: BreakdownRule = BreakdownRule {
        divisor: 10,
        min_steps: 3,
        max_steps: 10,
    };

    /// Whole (and split) steps to time after a run that trained `steps_trained` steps.
    pub fn steps(&self, steps_trained: u64) -> u64 {
        (steps_trained / self.divisor.max(1)).clamp(self.min_steps, self.max_steps)
    }
}

/// [`BreakdownRule::DEFAULT`] applied: what every worker times.
pub fn breakdown_steps(steps_trained: u64) -> u64 {
    BreakdownRule::DEFAULT.steps(steps_trained)
}

/// The warm-up of a worker plan. JSON: `{"steps": N}`, or
/// `{"of_total": {"divisor": D, "min_steps": M}}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PlanWarmup {
    /// The number of warm-up steps: the spec's `warmup_steps`, or the default
    /// for a run whose length is given in steps.
    Steps(u64),
    /// The default warm-up of a run given in epochs, whose total step count only
    /// the worker knows (epochs × the steps per epoch of the data it loads):
    /// `max(total_steps / divisor, min_steps)`, in whole steps.
    OfTotal { divisor: u64, min_steps: u64 },
}

impl PlanWarmup {
    /// [`default_warmup`] as data, for the worker to apply to a total it alone
    /// knows (the test `the_plans_warmup_rule_is_default_warmup` holds the two together).
    pub const DEFAULT_RULE: PlanWarmup = PlanWarmup::OfTotal {
        divisor: 20,
        min_steps: 1,
    };

    /// The warm-up `spec` trains with: its `warmup_steps` if given, else the
    /// default over its steps, else (epochs) the default rule.
    pub fn resolve(spec: &RunSpec) -> PlanWarmup {
        match (spec.warmup_steps, spec.length) {
            (Some(w), _) => PlanWarmup::Steps(w),
            (None, Length::Steps(total)) => PlanWarmup::Steps(default_warmup(total)),
            (None, Length::Epochs(_) | Length::ScriptDecides) => PlanWarmup::DEFAULT_RULE,
        }
    }

    /// The warm-up steps for a run of `total_steps` (what the worker computes).
    pub fn steps(&self, total_steps: u64) -> u64 {
        match *self {
            PlanWarmup::Steps(w) => w,
            PlanWarmup::OfTotal { divisor, min_steps } => {
                (total_steps / divisor.max(1)).max(min_steps)
            }
        }
    }
}

impl RunSpec {
    /// The plan for a Python worker of `framework`, as one JSON line.
    pub fn worker_plan_json(&self, framework: Framework) -> String {
        let analytic = !self.model_config.counted_by_worker();
        let plan = WorkerPlan {
            protocol: PROTOCOL_VERSION,
            framework,
            spec: self,
            param_count: analytic.then(|| self.model_config.param_count()),
            flops_per_sample: analytic.then(|| self.model_config.flops_per_sample()),
            traits: self.model_config.traits(),
            warmup: PlanWarmup::resolve(self),
            breakdown: BreakdownRule::DEFAULT,
            profile: self.profile.then_some(ProfileRule::DEFAULT),
            setting_prefixes: super::env::ALLOWED_PREFIXES,
        };
        serde_json::to_string(&plan).unwrap_or_default()
    }
}

/// Default warm-up length: 5 % of the run, at least one step.
pub fn default_warmup(total_steps: u64) -> u64 {
    PlanWarmup::DEFAULT_RULE.steps(total_steps)
}

#[cfg(test)]
mod plan_tests {
    use super::*;

    #[test]
    fn a_worker_plan_carries_the_resolved_spec_and_the_analytical_counts() {
        let spec = RunSpec::from_json(
            r#"{"model":"vit_mini_patch4_32","batch_size":8,"epochs":2,"data":"mnist","compile":"on","devices":2}"#,
        )
        .unwrap();
        let plan: serde_json::Value =
            serde_json::from_str(&spec.worker_plan_json(Framework::Pytorch)).unwrap();
        println!("{plan}");
        assert_eq!(plan["framework"], "pytorch");
        assert_eq!(plan["spec"]["compile"], "on");
        assert_eq!(plan["spec"]["length"]["epochs"], 2);
        assert_eq!(plan["spec"]["model_config"]["family"], "vit");
        assert_eq!(plan["spec"]["model_config"]["in_channels"], 1);
        assert_eq!(plan["param_count"], spec.model_config.param_count());
        assert_eq!(plan["traits"]["input"], "image");
        assert_eq!(plan["traits"]["objective"], "classes");
        // MNIST: 28 / 4 = 7 patches a side, plus the class token.
        assert_eq!(plan["traits"]["attention"]["tokens"], 50);
        // Epochs and no warm-up given: the total is the worker's to count, so
        // the plan carries the rule.
        assert_eq!(
            plan["warmup"],
            serde_json::json!({"of_total": {"divisor": 20, "min_steps": 1}})
        );
    }

    fn plan_of(spec: &str) -> serde_json::Value {
        let spec = RunSpec::from_json(spec).unwrap();
        serde_json::from_str(&spec.worker_plan_json(Framework::Tensorflow)).unwrap()
    }

    #[test]
    fn a_library_models_plan_leaves_the_counts_to_the_worker() {
        let spec = RunSpec::from_json(
            r#"{"model":"hf:llama?hidden_size=64&num_hidden_layers=2","batch_size":2,"steps":3,"seq_len":16}"#,
        )
        .unwrap();
        let plan: serde_json::Value =
            serde_json::from_str(&spec.worker_plan_json(Framework::Pytorch)).unwrap();
        assert_eq!(plan["param_count"], serde_json::Value::Null);
        assert_eq!(plan["flops_per_sample"], serde_json::Value::Null);
        // The worker's builder sets the traits (only the library says
        // whether a Hugging Face type is a decoder).
        assert_eq!(plan["traits"], serde_json::Value::Null);
        let c = &plan["spec"]["model_config"];
        assert_eq!(c["family"], "library");
        assert_eq!(c["library"], "hf");
        assert_eq!(c["name"], "llama");
        assert_eq!(c["overrides"]["hidden_size"], "64");
        assert_eq!(c["seq_len"], 16);
        let timm = RunSpec::from_json(r#"{"model":"timm:convnext_atto","batch_size":2,"steps":3}"#)
            .unwrap();
        let plan: serde_json::Value =
            serde_json::from_str(&timm.worker_plan_json(Framework::Pytorch)).unwrap();
        assert_eq!(
            plan["spec"]["model_config"]["image_size"],
            serde_json::Value::Null
        );
        assert_eq!(
            plan["spec"]["model_config"]["seq_len"],
            serde_json::Value::Null
        );
    }

    #[test]
    fn a_plan_carries_the_breakdown_rule() {
        let spec =
            RunSpec::from_json(r#"{"model":"resnet_mini","batch_size":16,"steps":200}"#).unwrap();
        let plan: serde_json::Value =
            serde_json::from_str(&spec.worker_plan_json(Framework::Jax)).unwrap();
        assert_eq!(
            plan["breakdown"],
            serde_json::json!({"divisor": 10, "min_steps": 3, "max_steps": 10})
        );
        assert_eq!(
            [10, 30, 55, 200, 5000].map(breakdown_steps),
            [3, 3, 5, 10, 10]
        );
    }

    #[test]
    fn a_plan_in_steps_carries_the_resolved_warmup() {
        // The default, resolved here: 5 % of 200 steps.
        let plan = plan_of(r#"{"model":"resnet_mini","batch_size":16,"steps":200}"#);
        assert_eq!(plan["warmup"], serde_json::json!({"steps": 10}));
        assert_eq!(plan["spec"]["warmup_steps"], serde_json::Value::Null);
        // At least one step.
        let plan = plan_of(r#"{"model":"resnet_mini","batch_size":16,"steps":19}"#);
        assert_eq!(plan["warmup"], serde_json::json!({"steps": 1}));
        // The spec's own value wins, 0 included, with steps or epochs.
        let plan =
            plan_of(r#"{"model":"resnet_mini","batch_size":16,"steps":200,"warmup_steps":0}"#);
        assert_eq!(plan["warmup"], serde_json::json!({"steps": 0}));
        let plan = plan_of(
            r#"{"model":"resnet_mini","batch_size":16,"epochs":3,"data":"mnist","warmup_steps":7}"#,
        );
        assert_eq!(plan["warmup"], serde_json::json!({"steps": 7}));
    }

    #[test]
    fn the_plans_warmup_rule_is_default_warmup() {
        for total in (0..=5_000).chain([99_999, 1_000_000, u64::MAX]) {
            assert_eq!(
                PlanWarmup::DEFAULT_RULE.steps(total),
                default_warmup(total),
                "{total}"
            );
            assert_eq!(PlanWarmup::Steps(3).steps(total), 3);
        }
        let spec =
            RunSpec::from_json(r#"{"model":"resnet_mini","batch_size":16,"steps":450}"#).unwrap();
        assert_eq!(PlanWarmup::resolve(&spec).steps(450), default_warmup(450));
    }
}
