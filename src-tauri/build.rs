//! The app's configuration lives at the repository root (`tauri.conf.json`,
//! `icons/`), beside `ui/`; capabilities stay here, where tauri-build looks.
fn main() {
    let attrs = tauri_build::Attributes::new();
    tauri_build::try_build(attrs.config_path("../tauri.conf.json"))
        .expect("tauri-build: cannot read ../tauri.conf.json");
}
