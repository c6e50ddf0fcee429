// Builds the C++ shim (SHIM_DIR, set by the including build.rs) against the
// same libtorch as torch-sys and puts libtorch's `lib/` directory on the
// binary's rpath, so the worker runs without LD_LIBRARY_PATH.
use std::path::PathBuf;

fn main() {
    let shim = format!("{SHIM_DIR}/trainbench_shim.cpp");
    println!("cargo:rerun-if-changed={shim}");
    // torch-sys (links = "tch") exports the lib directory it linked against.
    let lib = std::env::var("DEP_TCH_LIBTORCH_LIB")
        .map(PathBuf::from)
        .expect("torch-sys did not report its libtorch lib directory; build with LIBTORCH_USE_PYTORCH=1 (see README)");
    let root = lib
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| lib.clone());
    let cxx11_abi = std::env::var("LIBTORCH_CXX11_ABI").unwrap_or_else(|_| "1".to_owned());
    cc::Build::new()
        .cpp(true)
        .pic(true)
        .warnings(false)
        .include(root.join("include"))
        .include(root.join("include/torch/csrc/api/include"))
        .flag("-std=c++17")
        .flag(format!("-D_GLIBCXX_USE_CXX11_ABI={cxx11_abi}"))
        .flag("-DGLOG_USE_GLOG_EXPORT")
        .file(&shim)
        .compile("trainbench_shim");
    println!("cargo:rustc-link-search=native={}", lib.display());
    for l in ["torch_cpu", "c10"] {
        println!("cargo:rustc-link-lib=dylib={l}");
    }
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    println!("cargo:rustc-env=TRAINBENCH_LIBTORCH_LIB={}", lib.display());

    // Provenance: the wheel's own version file (`2.13.0+cu130`, `cuda = '13.0'`).
    let version_py = std::fs::read_to_string(root.join("version.py")).unwrap_or_default();
    let field = |name: &str| {
        version_py
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split('\'').nth(1))
            .unwrap_or("")
            .to_owned()
    };
    let version = field("__version__");
    println!(
        "cargo:rustc-env=TRAINBENCH_LIBTORCH_VERSION={}",
        if version.is_empty() {
            "unknown"
        } else {
            &version
        }
    );
    println!("cargo:rustc-env=TRAINBENCH_LIBTORCH_CUDA={}", field("cuda"));
    // The tch release this worker was built with, from its workspace's lock
    // (LOCK_FILE, set by the including build.rs): 0.26 for libtorch 2.13,
    // 0.24 for 2.11.
    let lock = std::fs::read_to_string(LOCK_FILE).unwrap_or_default();
    let tch = lock
        .split("[[package]]")
        .find(|p| p.contains("\nname = \"tch\"\n"))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = \"")))
        .map(|v| v.trim_end_matches('"'))
        .unwrap_or("unknown");
    println!("cargo:rustc-env=TRAINBENCH_TCH_VERSION={tch}");
    println!("cargo:rerun-if-changed={LOCK_FILE}");
    println!(
        "cargo:rerun-if-changed={}",
        root.join("version.py").display()
    );
}
