//! Which framework variables a run may set: none that loads code, takes a
//! path, or writes files. The frameworks' families (`NCCL_`, `TORCH_`,
//! `XLA_` …) also hold variables with the power of `LD_PRELOAD`
//! (`NCCL_NET_PLUGIN` names a library NCCL loads), variables that append to
//! a file of the user's (`TORCH_LOGS_OUT`), and caches whose compiled code
//! is loaded from a folder anyone may have filled
//! (`TORCHINDUCTOR_CACHE_DIR`). A stored or imported configuration run
//! again must not do any of that, so each is refused three ways:
//!
//! 1. by name: a deny-list of the variables known to load code or write,
//!    and any name with a word that takes a place (`…_DIR`, `…_FILE`,
//!    `…_PATH`, `…_PLUGIN`, `…_OUT` …);
//! 2. by value: a value that holds a path (`/`, or starts with `~`);
//! 3. inside `XLA_FLAGS` and `TF_XLA_FLAGS`: each `--flag` by the same word
//!    rule (`--xla_dump_to`, `--xla_gpu_cuda_data_dir`,
//!    `--xla_gpu_load_autotune_results_from` …).
//!
//! Bidirectional-control and zero-width characters are refused everywhere:
//! they make a label read differently from what is set.

/// Variables refused by name, each with what it would do.
pub const DENIED: &[(&str, &str)] = &[
    ("NCCL_NET_PLUGIN", "NCCL loads the library it names"),
    ("NCCL_TUNER_PLUGIN", "NCCL loads the library it names"),
    ("NCCL_PROFILER_PLUGIN", "NCCL loads the library it names"),
    ("NCCL_ENV_PLUGIN", "NCCL loads the library it names"),
    ("NCCL_RAS_ENABLE", "NCCL opens a network port for it"),
    (
        "NCCL_CONF_FILE",
        "NCCL reads settings from the file it names",
    ),
    (
        "TORCH_LOGS_OUT",
        "PyTorch appends its logs to the file it names",
    ),
    (
        "TORCH_TRACE",
        "PyTorch writes traces into the folder it names",
    ),
    ("TORCH_COMPILE_DEBUG", "torch.compile writes debug files"),
    (
        "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD",
        "torch.load then runs pickled code",
    ),
    (
        "TORCH_FORCE_WEIGHTS_ONLY_LOAD",
        "it changes what torch.load runs",
    ),
    (
        "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE",
        "compiled code is loaded from a server",
    ),
    (
        "TORCHINDUCTOR_AUTOTUNE_REMOTE_CACHE",
        "tuning results are loaded from a server",
    ),
    ("TORCHINDUCTOR_DEBUG", "torch.compile writes debug files"),
    ("TORCHINDUCTOR_TRACE", "torch.compile writes debug files"),
    ("PYTORCH_JIT_LOG_LEVEL", "it writes the JIT's logs"),
    (
        "TF_DUMP_GRAPH_PREFIX",
        "TensorFlow writes graphs into the folder it names",
    ),
    (
        "TF_XLA_FLAGS_FILE",
        "TensorFlow reads flags from the file it names",
    ),
    (
        "ONEDNN_JIT_DUMP",
        "oneDNN writes its generated code into files",
    ),
    (
        "DNNL_JIT_DUMP",
        "oneDNN writes its generated code into files",
    ),
    ("ONEDNN_JIT_PROFILE", "oneDNN writes profiling files"),
    ("DNNL_JIT_PROFILE", "oneDNN writes profiling files"),
    (
        "CUDNN_LOGDEST_DBG",
        "cuDNN writes its log to the file it names",
    ),
    (
        "CUBLAS_LOGDEST_DBG",
        "cuBLAS writes its log to the file it names",
    ),
    (
        "JAX_DUMP_IR_TO",
        "JAX writes its programs into the folder it names",
    ),
    ("JAX_PLATFORMS_PLUGIN", "JAX loads the plug-in it names"),
    (
        "PJRT_NAMES_AND_LIBRARY_PATHS",
        "JAX loads the libraries it names",
    ),
];

/// Variables outside the frameworks' families that make a program load
/// code (the dynamic loader's, the interpreters' and shells' start-up
/// files), each with what it would do. A run's variables are of the
/// families, so never one of these; a remote host's (`host add --env`,
/// exported before every command there) are checked against them.
pub const LOADERS: &[(&str, &str)] = &[
    (
        "LD_PRELOAD",
        "the dynamic loader loads the libraries it names into every program",
    ),
    (
        "LD_AUDIT",
        "the dynamic loader loads the libraries it names into every program",
    ),
    (
        "LD_LIBRARY_PATH",
        "the dynamic loader loads libraries from the folders it names first",
    ),
    (
        "GCONV_PATH",
        "glibc loads conversion modules from the folders it names",
    ),
    (
        "PYTHONPATH",
        "Python imports modules from the folders it names first",
    ),
    (
        "PYTHONHOME",
        "Python loads its standard library from the folder it names",
    ),
    ("PYTHONSTARTUP", "Python runs the file it names"),
    (
        "PYTHONUSERBASE",
        "Python imports packages from the folder it names",
    ),
    ("PYTHONBREAKPOINT", "Python calls the function it names"),
    ("BASH_ENV", "bash runs the file it names before a script"),
    ("ENV", "sh runs the file it names"),
    ("PERL5OPT", "Perl loads the modules it names"),
    (
        "PERL5LIB",
        "Perl loads modules from the folders it names first",
    ),
    ("RUBYOPT", "Ruby loads the libraries it names"),
    ("NODE_OPTIONS", "Node.js loads the modules it names"),
    ("JAVA_TOOL_OPTIONS", "Java loads the agents it names"),
];

/// Why a variable of this name makes a program load code (or write files,
/// for the frameworks' ones in [`DENIED`]); `None` when it does not.
pub fn loads_code(name: &str) -> Option<String> {
    LOADERS
        .iter()
        .chain(DENIED)
        .find(|(n, _)| *n == name)
        .map(|(n, why)| format!("none of the variables that load code or write files ({n}: {why})"))
}

/// Words of a variable's or a flag's name that take a place (a file, a
/// folder, a library, a server), split on `_`.
const PLACE_WORDS: &[&str] = &[
    "DIR",
    "DIRS",
    "DIRECTORY",
    "FILE",
    "FILES",
    "FILENAME",
    "PATH",
    "PATHS",
    "PLUGIN",
    "PLUGINS",
    "LIB",
    "LIBRARY",
    "LIBRARIES",
    "SO",
    "OUT",
    "OUTPUT",
    "DUMP",
    "DEST",
    "LOGDEST",
    "HOME",
    "ROOT",
    "PREFIX",
    "CACHE",
    "TO",
    "FROM",
    "LOAD",
    "URL",
    "SERVER",
];

/// Variables whose value is a list of command-line flags, each checked.
const FLAG_LISTS: &[&str] = &["XLA_FLAGS", "TF_XLA_FLAGS"];

/// Bidirectional controls (U+061C, U+200E–F, U+202A–E, U+2066–9) and
/// zero-width characters (U+200B–D, U+2060, U+FEFF).
pub fn is_spoofing(c: char) -> bool {
    matches!(
        c,
        '\u{061C}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2069}'
            | '\u{FEFF}'
    )
}

/// The place word in a name (`TORCHINDUCTOR_CACHE_DIR` → `CACHE`), if any.
fn place_word(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    upper
        .split(['_', '-'])
        .find_map(|w| PLACE_WORDS.iter().find(|p| **p == w).copied())
}

/// Whether a value names a path: it holds `/`, starts with `~`, or is `.`
/// or `..` (a bare file name is caught by the name's words instead).
fn is_path(value: &str) -> bool {
    value.contains('/') || value.starts_with('~') || value == "." || value == ".."
}

/// `value` as an error shows it: spoofing characters written as `\u{…}`.
pub fn shown(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            if is_spoofing(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Why `name=value` may not be set, or `None` when it may. The name is
/// already known to be of the frameworks' families.
pub fn hazard(name: &str, value: &str) -> Option<String> {
    if name.chars().chain(value.chars()).any(is_spoofing) {
        return Some(
            "no bidirectional-control or zero-width characters (they make a label read differently from what is set)"
                .into(),
        );
    }
    if let Some((_, why)) = DENIED.iter().find(|(n, _)| *n == name) {
        return Some(format!(
            "none of the variables that load code or write files ({name}: {why}; a stored or imported configuration must not do that when it runs again)"
        ));
    }
    if let Some(word) = place_word(name) {
        return Some(format!(
            "no variable whose name takes a place (…_DIR, …_FILE, …_PATH, …_PLUGIN, …_OUT, …_CACHE …; {name} has {word}): a run may not load code from or write to a place"
        ));
    }
    if FLAG_LISTS.contains(&name) {
        return value.split_whitespace().find_map(flag_hazard);
    }
    if is_path(value) {
        return Some(
            "a value that is not a path (this one holds / or starts with ~): a run may not load code from or write to a place"
                .into(),
        );
    }
    None
}

/// Why one flag of `XLA_FLAGS` may not be set.
fn flag_hazard(flag: &str) -> Option<String> {
    let (flag_name, flag_value) = flag.split_once('=').unwrap_or((flag, ""));
    let bare = flag_name.trim_start_matches('-');
    if let Some(word) = place_word(bare) {
        return Some(format!(
            "no compiler flag that takes a place ({flag_name} has {word}): it would make the compiler read or write files"
        ));
    }
    if is_path(flag_value) {
        return Some(format!(
            "no compiler flag whose value is a path ({flag_name} is given one)"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_denied_variable_and_place_taking_flag_is_refused_and_plain_settings_pass() {
        for (name, _) in DENIED {
            assert!(hazard(name, "1").is_some(), "{name}");
        }
        for (name, value) in [
            ("NCCL_NET_PLUGIN", "libevil.so"),
            ("NCCL_TUNER_PLUGIN", "x"),
            ("TORCH_LOGS_OUT", "log.txt"),
            ("TORCHINDUCTOR_CACHE_DIR", "c"),
            ("TORCH_EXTENSIONS_DIR", "e"),
            ("JAX_COMPILATION_CACHE_DIR", "c"),
            ("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1"),
            ("NCCL_DEBUG_FILE", "x"),
            ("NCCL_TOPO_FILE", "x"),
            ("TORCH_HOME", "x"),
            ("PYTORCH_KERNEL_CACHE_PATH", "x"),
            ("CUBLASLT_LOG_FILE", "x"),
            ("XLA_FLAGS", "--xla_dump_to=dir"),
            (
                "XLA_FLAGS",
                "--xla_force_host_platform_device_count=2 --xla_dump_to=d",
            ),
            ("XLA_FLAGS", "--xla_gpu_cuda_data_dir=/opt/cuda"),
            ("XLA_FLAGS", "--xla_gpu_load_autotune_results_from=r.pb"),
            ("XLA_FLAGS", "--xla_gpu_per_fusion_autotune_cache_dir=c"),
            ("XLA_FLAGS", "--xla_gpu_ptx_file=k.ptx"),
            ("XLA_FLAGS", "--xla_some_flag=/tmp/x"),
            ("TF_XLA_FLAGS", "--tf_xla_auto_jit=2 --xla_dump_to=x"),
            ("PYTORCH_CUDA_ALLOC_CONF", "/tmp/evil"),
            ("TF_ENABLE_ONEDNN_OPTS", "~/x"),
            ("TF_ENABLE_ONEDNN_OPTS", "\u{202E}0"),
            ("XLA_FLAGS", "--x\u{200B}=1"),
            ("JAX_ENABLE_X64", "\u{FEFF}1"),
        ] {
            assert!(hazard(name, value).is_some(), "{name}={value}");
        }
        for (name, value) in [
            ("XLA_FLAGS", "--xla_force_host_platform_device_count=8"),
            (
                "XLA_FLAGS",
                "--xla_cpu_multi_thread_eigen=false --xla_gpu_autotune_level=0",
            ),
            (
                "TF_XLA_FLAGS",
                "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit",
            ),
            ("TF_ENABLE_ONEDNN_OPTS", "0"),
            ("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"),
            ("NCCL_ALGO", "Ring"),
            ("NCCL_DEBUG", "INFO"),
            ("JAX_DEFAULT_MATMUL_PRECISION", "bfloat16"),
            ("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.5"),
            ("TORCH_LOGS", "+dynamo"),
            ("XLA_PYTHON_CLIENT_MEM_FRACTION", ".5"),
            ("KMP_AFFINITY", "granularity=fine,compact,1,0"),
        ] {
            assert_eq!(hazard(name, value), None, "{name}={value}");
        }
    }
}
