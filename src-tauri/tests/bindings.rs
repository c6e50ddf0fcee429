//! The UI's TypeScript bindings are generated from the commands; the
//! committed file must match (CI fails on drift). `UPDATE_BINDINGS=1 cargo
//! test -p trainbench-studio --test bindings` rewrites it.

#[test]
fn typescript_bindings_are_current() {
    let committed = trainbench_studio::bindings_path();
    let fresh = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("bindings-{}.ts", std::process::id()));
    trainbench_studio::export_bindings(&fresh).expect("bindings export");
    let fresh_text = std::fs::read_to_string(&fresh).expect("fresh bindings");
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::write(&committed, &fresh_text).expect("write bindings");
        return;
    }
    let old = std::fs::read_to_string(&committed).unwrap_or_default();
    assert!(
        old == fresh_text,
        "{} is out of date with the Rust commands: run `UPDATE_BINDINGS=1 cargo test -p trainbench-studio --test bindings` and commit it",
        committed.display()
    );
}
