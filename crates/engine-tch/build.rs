//! The libtorch worker's build (build_shim.rs), with the C++ shim from this
//! crate's `shim/`. The worker for PyTorch 2.11 (crates/engine-tch-2.11)
//! builds the same way from the same files.
const SHIM_DIR: &str = "shim";
const LOCK_FILE: &str = "../../Cargo.lock";
include!("build_shim.rs");
