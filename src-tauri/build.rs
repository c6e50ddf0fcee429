//! Standard tauri-build: `tauri.conf.json` sits beside this file because the
//! Tauri CLI (which bundles the .deb) only recognises a project whose config
//! is in the crate's folder (see ARCHITECTURE.md); `icons/` and `ui/` stay at
//! the repository root and the config points there.
fn main() {
    tauri_build::build();
}
