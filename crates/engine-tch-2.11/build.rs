//! The libtorch worker's build (crates/engine-tch/build_shim.rs), with the
//! C++ shim from crates/engine-tch: one source, two libtorch versions.
const SHIM_DIR: &str = "../engine-tch/shim";
const LOCK_FILE: &str = "Cargo.lock";
include!("../engine-tch/build_shim.rs");
