//! The keys runs are grouped by, made from the typed spec (never parsed back).

use serde::Serialize;

use super::options::Parallel;
use super::run::RunSpec;
use crate::framework::Framework;

/// A configuration's identity: two runs with equal `config` keys are repeats of
/// one configuration; two with equal `scaling` keys differ at most in their
/// device count (and the parallel mode that goes with it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigKeys {
    pub config: String,
    pub scaling: String,
}

#[derive(Serialize)]
struct Key<'a> {
    framework: Framework,
    environment: Option<&'a str>,
    spec: &'a RunSpec,
}

impl ConfigKeys {
    /// The keys of `spec` trained by `framework` in `environment` (`None`: the
    /// framework's own), as canonical JSON of the validated spec: values left
    /// at their default and values given equal to it give the same key.
    pub fn of(framework: Framework, environment: Option<&str>, spec: &RunSpec) -> ConfigKeys {
        let text = |spec: &RunSpec| {
            serde_json::to_string(&Key {
                framework,
                environment,
                spec,
            })
            .unwrap_or_default()
        };
        let mut one_device = spec.clone();
        one_device.devices = 1;
        one_device.nodes = 1;
        one_device.parallel = Parallel::Ddp;
        ConfigKeys {
            config: text(spec),
            scaling: text(&one_device),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> RunSpec {
        RunSpec::from_json(json).unwrap()
    }

    #[test]
    fn defaults_given_or_left_out_give_one_key_and_devices_only_change_the_config_key() {
        let a = ConfigKeys::of(
            Framework::Pytorch,
            None,
            &spec(r#"{"model":"resnet_mini","batch_size":8,"steps":10}"#),
        );
        let b = ConfigKeys::of(
            Framework::Pytorch,
            None,
            &spec(
                r#"{"model":"resnet_mini","batch_size":8,"steps":10,"precision":"fp32","lr":0.001}"#,
            ),
        );
        assert_eq!(a, b);
        let two = ConfigKeys::of(
            Framework::Pytorch,
            None,
            &spec(
                r#"{"model":"resnet_mini","batch_size":8,"steps":10,"devices":2,"parallel":"fsdp"}"#,
            ),
        );
        assert_ne!(two.config, a.config);
        assert_eq!(two.scaling, a.scaling);
        let other_env = ConfigKeys::of(
            Framework::Pytorch,
            Some("nightly"),
            &spec(r#"{"model":"resnet_mini","batch_size":8,"steps":10}"#),
        );
        assert_ne!(other_env.config, a.config);
        assert_ne!(other_env.scaling, a.scaling);
        let batch = ConfigKeys::of(
            Framework::Pytorch,
            None,
            &spec(r#"{"model":"resnet_mini","batch_size":16,"steps":10}"#),
        );
        assert_ne!(batch.scaling, a.scaling);
    }
}
