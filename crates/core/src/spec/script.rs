//! The spec of a person's training script (`script:PATH.py`): the script
//! chooses its model, data, batch, precision and optimizer, so the fields
//! that set those for the studio's harness take no value; what remains is
//! where it runs, its arguments and environment, the timing windows, a step
//! limit and a target accuracy.

use super::options::{Compile, DataSource, Device, Length, Parallel, Precision};
use super::raw::RawSpec;
use super::run::RunSpec;
use crate::error::SpecError;
use crate::models::file::check_sha256;
use crate::models::script::check_args;
use crate::models::{ModelConfig, ScriptConfig, ScriptRef};

/// What a script sets itself, for the refusal's words.
const OWN: &str = "the script sets it itself";

/// A field the harness reads, given for a script: refused, naming the field.
fn not_for_script(field: &str, value: impl ToString) -> SpecError {
    SpecError::new(
        field,
        value.to_string(),
        &format!("no value for a training script ({OWN}: pass it in the script's arguments)"),
    )
}

/// Every harness field at its default (as [`RawSpec::new`] leaves it).
fn harness_fields_unset(raw: &RawSpec) -> Result<(), SpecError> {
    let defaults = RawSpec::new(&raw.model, 0);
    let text: [(&str, &str, &str); 4] = [
        ("precision", &raw.precision, &defaults.precision),
        ("compile", &raw.compile, &defaults.compile),
        ("parallel", &raw.parallel, &defaults.parallel),
        ("data", &raw.data, &defaults.data),
    ];
    for (field, given, default) in text {
        if given != default {
            return Err(not_for_script(field, given));
        }
    }
    let numbers: [(&str, i64, i64); 4] = [
        ("batch_size", raw.batch_size, 0),
        ("devices", raw.devices, 1),
        (
            "synthetic_samples",
            raw.synthetic_samples,
            defaults.synthetic_samples,
        ),
        ("seed", i64::try_from(raw.seed).unwrap_or(i64::MAX), 0),
    ];
    for (field, given, default) in numbers {
        if given != default {
            return Err(not_for_script(field, given));
        }
    }
    let optional = [
        ("nodes", raw.nodes),
        ("epochs", raw.epochs),
        ("loader_workers", raw.loader_workers),
        ("num_classes", raw.num_classes),
        ("image_size", raw.image_size),
        ("in_channels", raw.in_channels),
        ("seq_len", raw.seq_len),
        ("vocab_size", raw.vocab_size),
        ("warmup_steps", raw.warmup_steps),
        ("eval_every_steps", raw.eval_every_steps),
    ];
    for (field, given) in optional {
        if let Some(v) = given {
            return Err(not_for_script(field, v));
        }
    }
    if raw.lr != defaults.lr {
        return Err(not_for_script("lr", raw.lr));
    }
    if raw.weight_decay != defaults.weight_decay {
        return Err(not_for_script("weight_decay", raw.weight_decay));
    }
    if let Some(p) = &raw.data_path {
        return Err(not_for_script("data_path", p));
    }
    if let Some(t) = raw.target_loss {
        return Err(not_for_script("target_loss", t));
    }
    if let Some(b) = raw.cudnn_benchmark {
        return Err(not_for_script("cudnn_benchmark", b));
    }
    if raw.profile {
        return Err(SpecError::new(
            "profile",
            "on",
            "no value for a training script (the operator profile runs the studio's own steps)",
        ));
    }
    Ok(())
}

/// A script's spec, checked and typed.
pub(super) fn script_spec(raw: RawSpec, script: ScriptRef) -> Result<RunSpec, SpecError> {
    script.require_absolute()?;
    let sha256 = check_sha256(raw.model_sha256.as_deref())?;
    check_args(&raw.script_args)?;
    harness_fields_unset(&raw)?;
    let device = Device::parse(&raw.device)?;
    let length = match raw.steps {
        None => Length::ScriptDecides,
        Some(s) => Length::Steps(super::fields::at_least_one("steps", s)?),
    };
    let window_steps = super::fields::at_least_one("window_steps", raw.window_steps)?;
    if let Some(t) = raw.target_accuracy {
        if !(t > 0.0 && t <= 1.0) {
            return Err(SpecError::new("target_accuracy", t, "a number in (0, 1]"));
        }
    }
    let threads = raw
        .threads
        .map(|t| {
            u32::try_from(t)
                .ok()
                .filter(|&t| t >= 1)
                .ok_or_else(|| SpecError::new("threads", t, "a whole number ≥ 1"))
        })
        .transpose()?;
    super::env::check(&raw.env)?;
    Ok(RunSpec {
        model: raw.model,
        model_config: ModelConfig::Script(ScriptConfig {
            script,
            sha256,
            args: raw.script_args,
        }),
        precision: Precision::Fp32,
        compile: Compile::Off,
        device,
        devices: 1,
        nodes: 1,
        parallel: Parallel::Ddp,
        batch_size: 0,
        length,
        data: DataSource::Synthetic,
        data_path: None,
        loader_workers: None,
        seed: 0,
        lr: raw.lr,
        weight_decay: raw.weight_decay,
        warmup_steps: None,
        window_steps,
        eval_every_steps: None,
        target_accuracy: raw.target_accuracy,
        target_loss: None,
        stop_at_target: raw.stop_at_target,
        threads,
        synthetic_samples: raw.synthetic_samples.unsigned_abs(),
        env: raw.env,
        cudnn_benchmark: None,
        profile: false,
    })
}

#[cfg(test)]
mod tests {
    use crate::models::ModelConfig;
    use crate::spec::{Length, RunSpec};

    const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn spec(extra: &str) -> Result<RunSpec, crate::error::SpecError> {
        RunSpec::from_json(&format!(
            r#"{{"model":"script:/w/train.py","model_sha256":"{SHA}","batch_size":0{extra}}}"#
        ))
    }

    #[test]
    fn a_script_runs_as_long_as_it_runs_or_as_many_steps_as_given() {
        let s = spec(r#","script_args":["--lr","1e-3"]"#).unwrap();
        assert_eq!(s.length, Length::ScriptDecides);
        let ModelConfig::Script(c) = &s.model_config else {
            panic!("{:?}", s.model_config)
        };
        assert_eq!(c.args, ["--lr", "1e-3"]);
        assert_eq!(c.script.path, "/w/train.py");
        assert_eq!(spec(r#","steps":40"#).unwrap().length, Length::Steps(40));
        assert!(spec(r#","target_accuracy":0.9,"stop_at_target":true"#).is_ok());
    }

    #[test]
    fn what_the_script_sets_itself_is_refused_by_field() {
        for (extra, field) in [
            (r#","precision":"amp-bf16""#, "precision"),
            (r#","compile":"on""#, "compile"),
            (r#","epochs":2"#, "epochs"),
            (r#","lr":0.1"#, "lr"),
            (r#","data":"mnist""#, "data"),
            (r#","image_size":32"#, "image_size"),
            (r#","devices":2"#, "devices"),
            (r#","profile":true"#, "profile"),
            (r#","steps":0"#, "steps"),
            (r#","script_args":["a\nb"]"#, "script_args"),
        ] {
            let e = spec(extra).unwrap_err();
            assert_eq!(e.field, field, "{extra}: {e}");
        }
        let batch = RunSpec::from_json(&format!(
            r#"{{"model":"script:/w/train.py","model_sha256":"{SHA}","batch_size":64}}"#
        ));
        assert_eq!(batch.unwrap_err().field, "batch_size");
        let relative = RunSpec::from_json(&format!(
            r#"{{"model":"script:train.py","model_sha256":"{SHA}","batch_size":0}}"#
        ));
        assert_eq!(relative.unwrap_err().field, "model");
        let args_elsewhere = RunSpec::from_json(
            r#"{"model":"resnet_mini","batch_size":2,"steps":3,"script_args":["x"]}"#,
        );
        assert_eq!(args_elsewhere.unwrap_err().field, "script_args");
    }
}
