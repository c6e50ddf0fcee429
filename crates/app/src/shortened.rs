//! `TRAINBENCH_EXAMPLE_STEPS=N`: every run the studio plans trains at most
//! N steps (a length in epochs becomes N steps). It lets a test run the
//! documentation's examples in seconds. A shortened run is not the
//! measurement its command describes, so the shells say so before the runs
//! start and each run records it in its provenance (`shortened`), where
//! `show`, JSON and session files carry it.

use serde_json::{json, Value};

use crate::error::{AppError, AppResult};

/// The variable's name.
pub const VARIABLE: &str = "TRAINBENCH_EXAMPLE_STEPS";

/// The provenance key a shortened run records it under.
pub const PROVENANCE_KEY: &str = "shortened";

/// The most steps each run trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shortened {
    pub steps: i64,
}

impl Shortened {
    /// From the environment: `None` when the variable is unset; a value that
    /// is not a whole number ≥ 1 is refused naming the variable.
    pub fn from_env() -> AppResult<Option<Shortened>> {
        match std::env::var_os(VARIABLE) {
            None => Ok(None),
            Some(v) => Shortened::parse(&v.to_string_lossy()).map(Some),
        }
    }

    pub fn parse(value: &str) -> AppResult<Shortened> {
        match value.parse::<i64>() {
            Ok(steps) if steps >= 1 => Ok(Shortened { steps }),
            _ => Err(AppError::bad_input(
                VARIABLE,
                format!("{value:?}"),
                "a whole number ≥ 1 (the most steps each run trains), or the variable unset",
            )),
        }
    }

    /// `length` at most `steps`: fewer steps kept, more steps or any number
    /// of epochs become `steps`, and timing windows no longer than the run.
    pub fn apply(self, length: Length) -> Length {
        let asked = if length.epochs.is_some() {
            None
        } else {
            length.steps
        };
        Length {
            steps: Some(asked.map_or(self.steps, |s| s.min(self.steps))),
            epochs: None,
            window_steps: length.window_steps.map(|w| w.min(self.steps)),
        }
    }

    /// What is said before the runs start.
    pub fn said(self) -> String {
        format!(
            "{VARIABLE}={n}: every run trains at most {n} step(s) (a length in epochs becomes {n} steps): shortened figures, not the measurement the command describes; each run records it in its provenance ({PROVENANCE_KEY})",
            n = self.steps
        )
    }

    /// What each run records under [`PROVENANCE_KEY`].
    pub fn provenance(self) -> Value {
        json!({"variable": VARIABLE, "steps_at_most": self.steps})
    }
}

/// A run's length as asked (a sweep request's fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Length {
    pub steps: Option<i64>,
    pub epochs: Option<i64>,
    pub window_steps: Option<i64>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a test fails loudly")]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_of_one_or_more_are_taken() {
        assert_eq!(Shortened::parse("1").unwrap().steps, 1);
        assert_eq!(Shortened::parse("200").unwrap().steps, 200);
    }

    #[test]
    fn anything_else_is_refused_naming_the_variable_the_value_and_what_is_allowed() {
        for bad in ["0", "-3", "2.5", "", "two", " 2", "1e3"] {
            let e = Shortened::parse(bad).unwrap_err().to_string();
            assert!(e.contains(VARIABLE), "{e}");
            assert!(e.contains(&format!("{bad:?}")), "{e}");
            assert!(e.contains("a whole number ≥ 1"), "{e}");
        }
    }

    #[test]
    fn steps_are_capped_and_epochs_become_steps() {
        let s = Shortened { steps: 4 };
        let length = |steps, epochs, window_steps| Length {
            steps,
            epochs,
            window_steps,
        };
        assert_eq!(
            s.apply(length(Some(200), None, Some(10))),
            length(Some(4), None, Some(4))
        );
        assert_eq!(
            s.apply(length(Some(2), None, None)),
            length(Some(2), None, None),
            "a shorter run is kept"
        );
        assert_eq!(
            s.apply(length(None, Some(5), None)),
            length(Some(4), None, None)
        );
        assert_eq!(
            s.apply(length(None, None, Some(3))),
            length(Some(4), None, Some(3))
        );
    }

    #[test]
    fn the_record_and_the_sentence_name_the_variable() {
        let s = Shortened { steps: 2 };
        assert_eq!(s.provenance()["steps_at_most"], 2);
        assert_eq!(s.provenance()["variable"], VARIABLE);
        assert!(s
            .said()
            .starts_with("TRAINBENCH_EXAMPLE_STEPS=2: every run trains at most 2 step(s)"));
    }
}
