//! The frameworks the studio trains with.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::SpecError;

/// A training framework. `Tch` is libtorch driven from Rust (this build's own
/// worker); the others are Python workers in a registered environment.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Framework {
    Tch,
    Pytorch,
    Tensorflow,
    Jax,
}

impl Framework {
    /// Every framework the studio knows of.
    pub const ALL: [Framework; 4] = [
        Framework::Tch,
        Framework::Pytorch,
        Framework::Tensorflow,
        Framework::Jax,
    ];

    /// The frameworks whose worker is Python (in an environment of their own).
    pub const PYTHON: [Framework; 3] = [Framework::Pytorch, Framework::Tensorflow, Framework::Jax];

    pub fn as_str(self) -> &'static str {
        match self {
            Framework::Tch => "tch",
            Framework::Pytorch => "pytorch",
            Framework::Tensorflow => "tensorflow",
            Framework::Jax => "jax",
        }
    }

    /// `names` joined with ", ", for an error's "expected one of …".
    pub fn list(names: &[Framework]) -> String {
        names
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn parse(s: &str) -> Result<Framework, SpecError> {
        Framework::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| {
                SpecError::new(
                    "framework",
                    s,
                    &format!("one of {}", Framework::list(&Framework::ALL)),
                )
            })
    }

    /// The name a person reads in the wizard.
    pub fn title(self) -> &'static str {
        match self {
            Framework::Tch => "PyTorch (libtorch from Rust, tch)",
            Framework::Pytorch => "PyTorch (Python)",
            Framework::Tensorflow => "TensorFlow",
            Framework::Jax => "JAX (Flax, Optax)",
        }
    }

    /// A Python worker (`python -m trainbench_worker FRAMEWORK`).
    pub fn is_python(self) -> bool {
        self != Framework::Tch
    }
}

impl fmt::Display for Framework {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Framework {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Framework::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for f in Framework::ALL {
            assert_eq!(Framework::parse(f.as_str()).unwrap(), f);
            assert_eq!(serde_json::to_value(f).unwrap(), f.as_str());
        }
        let e = Framework::parse("mxnet").unwrap_err();
        assert_eq!(e.field, "framework");
        assert!(e.allowed.contains("tch, pytorch, tensorflow, jax"), "{e}");
    }
}
