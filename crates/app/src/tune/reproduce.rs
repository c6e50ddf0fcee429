//! The winner as something a person can run again: the `trainbench run`
//! command (every word through the remote crate's one quoting function
//! unless it is plain) and the same settings as a TOML file for
//! `trainbench run --config`.

use crate::sweep::SweepRequest;

/// Settings as (flag, TOML key, value), those set only.
fn settings(r: &SweepRequest) -> Vec<(&'static str, &'static str, String)> {
    let join = |v: &[String]| v.join(",");
    let ints = |v: &[i64]| {
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut out = vec![
        ("--model", "model", join(&r.model)),
        ("--framework", "framework", join(&r.framework)),
        ("--precision", "precision", join(&r.precision)),
        ("--compile", "compile", join(&r.compile)),
        ("--batch-size", "batch_size", ints(&r.batch_size)),
    ];
    if !r.threads.is_empty() {
        out.push(("--threads", "threads", ints(&r.threads)));
    }
    let optional = [
        ("--device", "device", r.device.clone()),
        ("--data", "data", Some(r.data.clone())),
        ("--steps", "steps", r.steps.map(|s| s.to_string())),
        (
            "--window-steps",
            "window_steps",
            r.window_steps.map(|s| s.to_string()),
        ),
        (
            "--image-size",
            "image_size",
            r.image_size.map(|s| s.to_string()),
        ),
        ("--seq-len", "seq_len", r.seq_len.map(|s| s.to_string())),
        ("--input-shape", "input_shape", r.input_shape.clone()),
        (
            "--num-classes",
            "num_classes",
            r.num_classes.map(|s| s.to_string()),
        ),
        (
            "--vocab-size",
            "vocab_size",
            r.vocab_size.map(|s| s.to_string()),
        ),
        ("--price", "price", r.price.clone()),
    ];
    out.extend(
        optional
            .into_iter()
            .chain(training(r))
            .filter_map(|(flag, key, v)| v.map(|v| (flag, key, v))),
    );
    out
}

/// A memory size as `--memory-limit` reads it: whole GiB or MiB, else bytes.
fn size(bytes: u64) -> String {
    match bytes {
        b if b % (1 << 30) == 0 => format!("{}G", b >> 30),
        b if b % (1 << 20) == 0 => format!("{}M", b >> 20),
        b => b.to_string(),
    }
}

/// How the candidate trains and is measured beyond its shape: devices,
/// data loading, the learning rate, the target and its evaluations, the
/// environment, memory limit and epoch size (those set only).
fn training(r: &SweepRequest) -> Vec<(&'static str, &'static str, Option<String>)> {
    let text = |v: Option<f64>| v.map(|x| x.to_string());
    let int = |v: Option<i64>| v.map(|x| x.to_string());
    let devices = (r.devices.len() == 1 && r.devices != [1]).then(|| r.devices[0].to_string());
    let cudnn = match r.cudnn_benchmark.as_slice() {
        [on] => Some(if *on { "on" } else { "off" }.to_string()),
        _ => None,
    };
    vec![
        ("--devices", "devices", devices),
        ("--parallel", "parallel", r.parallel.clone()),
        ("--loader-workers", "loader_workers", int(r.loader_workers)),
        ("--model-name", "model_name", r.model_name.clone()),
        ("--lr", "lr", text(r.lr)),
        (
            "--target-accuracy",
            "target_accuracy",
            text(r.target_accuracy),
        ),
        ("--target-loss", "target_loss", text(r.target_loss)),
        ("--eval-every", "eval_every", int(r.eval_every_steps)),
        ("--cudnn-benchmark", "cudnn_benchmark", cudnn),
        ("--env", "env", r.env.first().cloned()),
        (
            "--memory-limit",
            "memory_limit",
            r.memory_limit_bytes.map(size),
        ),
        ("--epoch-size", "epoch_size", int(r.epoch_size)),
    ]
}

/// The flags that are switches, set only: a run that keeps training past
/// its target, a run with an operator profile.
fn switches(r: &SweepRequest) -> Vec<&'static str> {
    let mut out = Vec::new();
    if !r.stop_at_target && (r.target_accuracy.is_some() || r.target_loss.is_some()) {
        out.push("--no-stop-at-target");
    }
    if r.profile {
        out.push("--profile");
    }
    out
}

/// A word as the shell should get it: plain when it holds only characters
/// no shell treats specially, else quoted by the one quoting function.
pub fn word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,:/=@+".contains(c));
    if plain {
        s.to_string()
    } else {
        trainbench_remote::shell_quote(s)
    }
}

/// `trainbench run …` with the candidate's settings and 3 repeats.
pub fn command(r: &SweepRequest) -> String {
    let mut words = vec!["trainbench".to_string(), "run".to_string()];
    for (flag, _, value) in settings(r) {
        words.push(flag.to_string());
        words.push(word(&value));
    }
    words.extend(switches(r).into_iter().map(String::from));
    words.push("--repeats".into());
    words.push("3".into());
    words.join(" ")
}

/// The same settings as a TOML file (`trainbench run --config FILE`).
pub fn toml(r: &SweepRequest) -> String {
    let numeric = [
        "devices",
        "loader_workers",
        "lr",
        "target_accuracy",
        "target_loss",
        "eval_every",
        "epoch_size",
        "batch_size",
        "threads",
        "steps",
        "window_steps",
        "image_size",
        "seq_len",
        "num_classes",
        "vocab_size",
    ];
    let mut text = String::new();
    for (_, key, value) in settings(r) {
        let is_number = numeric.contains(&key) && !value.contains(',');
        let v = if is_number {
            value
        } else {
            // A JSON string is a TOML basic string (the same escapes).
            serde_json::Value::String(value).to_string()
        };
        text.push_str(&format!("{key} = {v}\n"));
    }
    if r.profile {
        text.push_str("profile = true\n");
    }
    text.push_str("repeats = 3\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_quotes_what_a_shell_would_read_and_the_toml_escapes_strings() {
        let r = SweepRequest {
            model: vec!["my model.py:build".into()],
            framework: vec!["pytorch".into()],
            compile: vec!["on".into()],
            batch_size: vec![32],
            threads: vec![2],
            steps: Some(40),
            data: "text:it's.txt".into(),
            ..SweepRequest::default()
        };
        let c = command(&r);
        assert!(
            c.starts_with("trainbench run --model 'my model.py:build' --framework pytorch"),
            "{c}"
        );
        assert!(c.contains("--data 'text:it'\\''s.txt'"), "{c}");
        assert!(c.contains("--batch-size 32 --threads 2"), "{c}");
        assert!(c.ends_with("--repeats 3"), "{c}");
        let t = toml(&r);
        assert!(t.contains("model = \"my model.py:build\"\n"), "{t}");
        assert!(t.contains("batch_size = 32\n"), "{t}");
        assert!(t.contains("compile = \"on\"\n"), "{t}");
    }

    /// A search for the time to accuracy reproduces with its target, its
    /// evaluations and its learning rate; a memory limit as a size.
    #[test]
    fn the_target_its_evaluations_and_the_limits_are_in_the_command_and_the_toml() {
        let r = SweepRequest {
            model: vec!["resnet_mini".into()],
            framework: vec!["tch".into()],
            batch_size: vec![16],
            data: "mnist".into(),
            target_accuracy: Some(0.6),
            eval_every_steps: Some(10),
            lr: Some(2e-3),
            memory_limit_bytes: Some(4 << 30),
            env: vec!["A=1;B=two words".into()],
            ..SweepRequest::default()
        };
        let c = command(&r);
        for part in [
            "--target-accuracy 0.6",
            "--eval-every 10",
            "--lr 0.002",
            "--memory-limit 4G",
            "--env 'A=1;B=two words'",
        ] {
            assert!(c.contains(part), "{part}: {c}");
        }
        assert!(!c.contains("--no-stop-at-target"), "{c}");
        let t = toml(&r);
        for line in [
            "target_accuracy = 0.6\n",
            "eval_every = 10\n",
            "lr = 0.002\n",
            "memory_limit = \"4G\"\n",
            "env = \"A=1;B=two words\"\n",
        ] {
            assert!(t.contains(line), "{line}: {t}");
        }
    }
}
