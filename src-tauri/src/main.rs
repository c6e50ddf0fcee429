// No console window on Windows in release builds (harmless elsewhere).
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() -> std::process::ExitCode {
    match trainbench_studio::run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("trainbench-studio: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
