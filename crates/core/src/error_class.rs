//! Why a run ended in error: the classes a worker sends in its `error`
//! event, and the one the runner adds for a worker that died without one.

use serde::{Deserialize, Serialize};

/// Why a run ended in error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// The device ran out of memory.
    Oom,
    /// The combination asked for cannot run here (precision, device count, …).
    Unsupported,
    /// The spec or its data is wrong; `field` names what.
    BadConfig,
    /// The loss became NaN or infinite.
    NanLoss,
    /// Anything else: a bug or an unexpected framework error.
    Internal,
    /// The worker died from a signal before saying why (killed by the
    /// kernel's OOM killer, a segmentation fault …). Only the runner
    /// assigns it; a worker never sends it.
    Crashed,
}

impl ErrorClass {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Oom => "oom",
            ErrorClass::Unsupported => "unsupported",
            ErrorClass::BadConfig => "bad_config",
            ErrorClass::NanLoss => "nan_loss",
            ErrorClass::Internal => "internal",
            ErrorClass::Crashed => "crashed",
        }
    }

    /// Every class.
    pub const ALL: [ErrorClass; 6] = [
        ErrorClass::Oom,
        ErrorClass::Unsupported,
        ErrorClass::BadConfig,
        ErrorClass::NanLoss,
        ErrorClass::Internal,
        ErrorClass::Crashed,
    ];

    /// The class a stored string names (`None` for none of them).
    pub fn parse(text: &str) -> Option<ErrorClass> {
        ErrorClass::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_class_reads_back_from_its_stored_name() {
        for c in ErrorClass::ALL {
            assert_eq!(ErrorClass::parse(c.as_str()), Some(c));
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(
                json,
                format!("\"{}\"", c.as_str()),
                "serde and as_str agree"
            );
        }
        assert_eq!(ErrorClass::parse("all"), None);
    }
}
