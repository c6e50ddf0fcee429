//! Environment variables a run sets for its worker, the settings people A/B
//! (`XLA_FLAGS`, `TF_ENABLE_ONEDNN_OPTS`, `PYTORCH_CUDA_ALLOC_CONF` …).
//! They are part of the configuration (its key and its label), so a sweep
//! over them compares them; the runner sets them on the worker's process (no
//! shell is involved, on a remote host neither: its agent starts the worker
//! the same way), and the worker states what it saw in its hello.
//!
//! Only variables of the frameworks' own families are allowed: a variable
//! such as `LD_PRELOAD` or `PYTHONSTARTUP` would run code that nobody typed
//! when a stored or imported configuration is run again. Within the
//! families, none that loads code, takes a path or writes files
//! ([`super::env_safety`]). Thread counts have
//! their own setting (`threads`), which the runner turns into the libraries'
//! variables itself.

use std::collections::BTreeMap;

use crate::error::SpecError;

/// The variables a run sets: name → value.
pub type WorkerEnv = BTreeMap<String, String>;

/// Name prefixes a run may set, and that the workers state in their hello.
/// TensorFlow's are listed one family at a time: `TF_` alone would take in
/// Terraform's `TF_VAR_…` and `TF_TOKEN_…`, which can hold secrets.
pub const ALLOWED_PREFIXES: &[&str] = &[
    "XLA_",
    "TF_ENABLE_",
    "TF_DISABLE_",
    "TF_XLA_",
    "TF_GPU_",
    "TF_CPP_",
    "TF_FORCE_",
    "TF_CUDNN_",
    "TF_DETERMINISTIC_",
    "TF_USE_",
    "TF_ONEDNN_",
    "TF_MKL_",
    "TF_AUTOTUNE_",
    "TF_NUM_",
    "JAX_",
    "PYTORCH_",
    "TORCH_",
    "TORCHINDUCTOR_",
    "CUDNN_",
    "CUBLAS_",
    "CUBLASLT_",
    "NCCL_",
    "NVIDIA_TF32_OVERRIDE",
    "ONEDNN_",
    "DNNL_",
    "KMP_",
];

/// Names with a setting of their own, and that setting.
const OWN_SETTING: &[(&str, &str)] = &[
    ("OMP_NUM_THREADS", "threads"),
    ("MKL_NUM_THREADS", "threads"),
    ("OPENBLAS_NUM_THREADS", "threads"),
    ("TF_NUM_INTEROP_THREADS", "threads"),
    ("TF_NUM_INTRAOP_THREADS", "threads"),
    ("CUDA_VISIBLE_DEVICES", "device and devices"),
];

/// The longest value accepted (`XLA_FLAGS` with many flags fits).
pub const MAX_VALUE_CHARS: usize = 4096;

/// Whether a variable of this name is a setting the studio records for a
/// run (allowed to set, and echoed by the workers).
pub fn is_setting(name: &str) -> bool {
    ALLOWED_PREFIXES.iter().any(|p| name.starts_with(p))
}

fn allowed_names() -> String {
    format!(
        "a name of the frameworks' own families ({}, upper case letters, digits and _)",
        ALLOWED_PREFIXES
            .iter()
            .map(|p| if p.ends_with('_') {
                format!("{p}…")
            } else {
                (*p).to_owned()
            })
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Checks every name and value: the field is `env`.
pub fn check(env: &WorkerEnv) -> Result<(), SpecError> {
    for (name, value) in env {
        if let Some((_, own)) = OWN_SETTING.iter().find(|(n, _)| n == name) {
            return Err(SpecError::new(
                "env",
                format!("{name}={value}"),
                &format!("{name} is set by the studio from {own}: use that setting instead"),
            ));
        }
        let well_formed = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !well_formed || !is_setting(name) {
            return Err(SpecError::new("env", name, &allowed_names()));
        }
        if value.chars().count() > MAX_VALUE_CHARS || value.chars().any(char::is_control) {
            return Err(SpecError::new(
                "env",
                format!("{name}=…"),
                &format!("a value of at most {MAX_VALUE_CHARS} characters on one line"),
            ));
        }
        if let Some(why) = super::env_safety::hazard(name, value) {
            let value = super::env_safety::shown(value);
            return Err(SpecError::new("env", format!("{name}={value}"), &why));
        }
    }
    Ok(())
}

/// Checks one variable a remote host exports before every command there
/// (`host add --env`), and so into every worker started there: by the
/// run's own rules ([`check`]) when it is of the frameworks' families, as
/// `run --env` would set it; otherwise a setting of the host's own
/// (`SLURM_CONF=/etc/slurm/other.conf`, a path allowed), refused when it
/// loads code (`LD_PRELOAD`, `PYTHONSTARTUP` …:
/// [`super::env_safety::loads_code`]) or holds a bidirectional-control or
/// zero-width character. The field is `env`.
pub fn check_host_variable(name: &str, value: &str) -> Result<(), SpecError> {
    let why = if let Some(why) = super::env_safety::loads_code(name) {
        format!("{why}: the host exports it into every run there")
    } else if is_setting(name) {
        return check(&WorkerEnv::from([(name.to_owned(), value.to_owned())]));
    } else if name
        .chars()
        .chain(value.chars())
        .any(super::env_safety::is_spoofing)
    {
        "no bidirectional-control or zero-width characters (they make a name or value read differently from what is set)".to_owned()
    } else {
        return Ok(());
    };
    let value = super::env_safety::shown(value);
    Err(SpecError::new("env", format!("{name}={value}"), &why))
}

/// One alternative of an `env` sweep as a person writes it:
/// `NAME=VALUE[;NAME=VALUE…]`, or `default` (nothing set). A value may hold
/// `=` and spaces (`XLA_FLAGS=--a=1 --b=2`), not `;`.
pub fn parse_alternative(text: &str) -> Result<WorkerEnv, SpecError> {
    let text = text.trim();
    let mut env = WorkerEnv::new();
    if text == "default" {
        return Ok(env);
    }
    for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((name, value)) = part.split_once('=') else {
            return Err(SpecError::new(
                "env",
                part,
                "NAME=VALUE (several joined by ;), or default for none set",
            ));
        };
        if env
            .insert(name.trim().to_owned(), value.to_owned())
            .is_some()
        {
            return Err(SpecError::new(
                "env",
                text,
                "each name once per alternative",
            ));
        }
    }
    if env.is_empty() {
        return Err(SpecError::new(
            "env",
            text,
            "NAME=VALUE (several joined by ;), or default for none set",
        ));
    }
    check(&env)?;
    Ok(env)
}

/// The variables as a label shows them: `XLA_FLAGS=--x TF_ENABLE_ONEDNN_OPTS=0`.
pub fn label(env: &WorkerEnv) -> String {
    env.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{ConfigKeys, RunSpec};
    use crate::Framework;

    #[test]
    fn the_key_changes_with_the_variables_and_not_without_them() {
        let base = r#"{"model":"resnet_mini","batch_size":8,"steps":10"#;
        let plain = RunSpec::from_json(&format!("{base}}}")).unwrap();
        let set = RunSpec::from_json(&format!(r#"{base},"env":{{"XLA_FLAGS":"--x"}}}}"#)).unwrap();
        let a = ConfigKeys::of(Framework::Jax, None, &plain);
        // Runs stored before variables existed keep their keys.
        assert!(!a.config.contains("\"env\":"), "{}", a.config);
        assert_ne!(a.config, ConfigKeys::of(Framework::Jax, None, &set).config);
        // A spec file naming another variable is refused like the flag.
        let e =
            RunSpec::from_json(&format!(r#"{base},"env":{{"LD_PRELOAD":"x.so"}}}}"#)).unwrap_err();
        assert!(e.to_string().contains("env"), "{e}");
    }

    #[test]
    fn alternatives_are_parsed_and_checked_naming_the_field() {
        let a = parse_alternative("XLA_FLAGS=--xla_cpu_multi_thread_eigen=false --x=1").unwrap();
        assert_eq!(a["XLA_FLAGS"], "--xla_cpu_multi_thread_eigen=false --x=1");
        let two =
            parse_alternative("TF_ENABLE_ONEDNN_OPTS=0; TF_XLA_FLAGS=--tf_xla_auto_jit=2").unwrap();
        assert_eq!(two.len(), 2);
        assert_eq!(
            label(&two),
            "TF_ENABLE_ONEDNN_OPTS=0 TF_XLA_FLAGS=--tf_xla_auto_jit=2"
        );
        assert!(parse_alternative("default").unwrap().is_empty());
        assert_eq!(parse_alternative("XLA_FLAGS=").unwrap()["XLA_FLAGS"], "");
        for (text, says) in [
            ("LD_PRELOAD=/tmp/x.so", "frameworks' own families"),
            ("TF_TOKEN_app_terraform_io=x", "frameworks' own families"),
            ("TF_VAR_password=x", "frameworks' own families"),
            ("PYTHONSTARTUP=/tmp/x.py", "frameworks' own families"),
            ("xla_flags=1", "frameworks' own families"),
            ("OMP_NUM_THREADS=4", "use that setting instead"),
            ("CUDA_VISIBLE_DEVICES=1", "device and devices"),
            ("XLA_FLAGS", "NAME=VALUE"),
            ("", "NAME=VALUE"),
            ("XLA_FLAGS=1;XLA_FLAGS=2", "each name once"),
        ] {
            let e = parse_alternative(text).unwrap_err();
            assert_eq!(e.field, "env", "{text}");
            assert!(e.allowed.contains(says), "{text}: {e:?}");
        }
        let mut long = WorkerEnv::new();
        long.insert("XLA_FLAGS".into(), "x".repeat(MAX_VALUE_CHARS + 1));
        assert!(check(&long).is_err());
        long.insert("XLA_FLAGS".into(), "a\nb".into());
        assert!(check(&long).is_err());
    }

    #[test]
    fn a_hosts_variables_that_load_code_are_refused_and_its_own_settings_pass() {
        for (name, value, says) in [
            (
                "LD_PRELOAD",
                "/tmp/x.so",
                "LD_PRELOAD: the dynamic loader loads",
            ),
            (
                "PYTHONSTARTUP",
                "/tmp/x.py",
                "PYTHONSTARTUP: Python runs the file",
            ),
            ("BASH_ENV", "/tmp/x.sh", "BASH_ENV: bash runs the file"),
            ("NCCL_NET_PLUGIN", "x", "NCCL loads the library it names"),
            (
                "PJRT_NAMES_AND_LIBRARY_PATHS",
                "x:/y.so",
                "JAX loads the libraries",
            ),
            // Of the frameworks' families: the run's own rules.
            ("TORCHINDUCTOR_CACHE_DIR", "/tmp/c", "takes a place"),
            ("TF_NUM_INTEROP_THREADS", "4", "use that setting instead"),
            (
                "SLURM_CONF",
                "/etc/slurm\u{202e}.conf",
                "bidirectional-control",
            ),
        ] {
            let e = check_host_variable(name, value).unwrap_err();
            assert_eq!(e.field, "env", "{name}");
            assert!(e.to_string().starts_with(&format!("env = {name}=")), "{e}");
            assert!(e.allowed.contains(says), "{name}: {e}");
        }
        for (name, value) in [
            ("SLURM_CONF", "/etc/slurm/other.conf"),
            ("TRAINBENCH_SSH_CONFIG", "/home/me/.ssh/config"),
            ("TB_X", "$(touch M)"),
            ("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false"),
        ] {
            assert_eq!(check_host_variable(name, value), Ok(()), "{name}={value}");
        }
    }
}
