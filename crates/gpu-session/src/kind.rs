//! The frameworks a GPU session trains with. A leaf.

use serde::Serialize;

/// Which framework a studio item trains with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Pytorch,
    Jax,
    /// The libtorch worker (Rust, through tch).
    Tch,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Pytorch => "pytorch",
            Kind::Jax => "jax",
            Kind::Tch => "tch",
        }
    }
}
