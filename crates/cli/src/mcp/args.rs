//! A tool's arguments read by name and type (a wrong one is refused naming
//! the argument, the value given and what is allowed, as a flag is), and
//! what a tool answers.

use serde_json::{Map, Value};

use crate::error::{bad, CliError};

/// What a tool answers: the CLI's `--json` document and a line of text.
pub struct Answer {
    pub json: Value,
    pub text: String,
}

/// The arguments of one call.
pub struct Args<'a> {
    pub map: &'a Map<String, Value>,
}

fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Args<'_> {
    /// Refuses an argument the tool does not take.
    pub fn only(&self, tool: &str, known: &[&str]) -> Result<(), CliError> {
        match self.map.keys().find(|k| !known.contains(&k.as_str())) {
            None => Ok(()),
            Some(k) => Err(bad(
                k,
                format!(
                    "{k} is not an argument of {tool}: expected {}",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        format!("one of {}", known.join(", "))
                    }
                ),
            )),
        }
    }

    fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    fn missing(name: &str, what: &str) -> CliError {
        bad(name, format!("{name} is missing: expected {what}"))
    }

    pub fn int(&self, name: &str) -> Result<i64, CliError> {
        self.opt_int(name)?
            .ok_or_else(|| Self::missing(name, "a whole number"))
    }

    pub fn opt_int(&self, name: &str) -> Result<Option<i64>, CliError> {
        self.get(name)
            .map(|v| {
                v.as_i64().ok_or_else(|| {
                    bad(
                        name,
                        format!(
                            "{name} = {} is not allowed: expected a whole number",
                            shown(v)
                        ),
                    )
                })
            })
            .transpose()
    }

    pub fn opt_number(&self, name: &str) -> Result<Option<f64>, CliError> {
        self.get(name)
            .map(|v| {
                v.as_f64().ok_or_else(|| {
                    bad(
                        name,
                        format!("{name} = {} is not allowed: expected a number", shown(v)),
                    )
                })
            })
            .transpose()
    }

    pub fn string(&self, name: &str) -> Result<String, CliError> {
        self.opt_string(name)?
            .ok_or_else(|| Self::missing(name, "a string"))
    }

    pub fn opt_string(&self, name: &str) -> Result<Option<String>, CliError> {
        self.get(name)
            .map(|v| {
                v.as_str().map(str::to_owned).ok_or_else(|| {
                    bad(
                        name,
                        format!("{name} = {} is not allowed: expected a string", shown(v)),
                    )
                })
            })
            .transpose()
    }

    pub fn flag(&self, name: &str) -> Result<bool, CliError> {
        self.get(name).map_or(Ok(false), |v| {
            v.as_bool().ok_or_else(|| {
                bad(
                    name,
                    format!(
                        "{name} = {} is not allowed: expected true or false",
                        shown(v)
                    ),
                )
            })
        })
    }

    /// A list of run ids, at least `least`.
    pub fn ids(&self, name: &str, least: usize) -> Result<Vec<i64>, CliError> {
        let wrong = |v: &Value| {
            bad(
                name,
                format!(
                    "{name} = {} is not allowed: expected a list of at least {least} run ids (whole numbers)",
                    shown(v)
                ),
            )
        };
        let v = self
            .get(name)
            .ok_or_else(|| Self::missing(name, "a list of run ids"))?;
        let ids = v
            .as_array()
            .ok_or_else(|| wrong(v))?
            .iter()
            .map(Value::as_i64)
            .collect::<Option<Vec<i64>>>()
            .ok_or_else(|| wrong(v))?;
        if ids.len() < least {
            return Err(wrong(v));
        }
        Ok(ids)
    }

    /// An object of settings (run's config-file keys).
    pub fn object(&self, name: &str) -> Result<Map<String, Value>, CliError> {
        match self.get(name) {
            None => Ok(Map::new()),
            Some(Value::Object(m)) => Ok(m.clone()),
            Some(v) => Err(bad(
                name,
                format!(
                    "{name} = {} is not allowed: expected an object of run settings",
                    shown(v)
                ),
            )),
        }
    }
}
