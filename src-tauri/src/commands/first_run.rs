//! The welcome view's two runs: the quick benchmark and the suggested
//! second one (`trainbench_app::first_run`, the rules the CLI's quick
//! default shares).

use trainbench_app::first_run::{self, NextRun};
use trainbench_app::frameworks::framework_choices;
use trainbench_app::sweep::SweepRequest;

/// The quick benchmark's request, in the first installed framework.
#[tauri::command]
#[specta::specta]
pub fn quick_benchmark() -> SweepRequest {
    first_run::quick_benchmark(&framework_choices())
}

/// The run that turns `first` into a comparison, if one applies.
#[tauri::command]
#[specta::specta]
pub fn suggest_next_run(first: SweepRequest) -> Option<NextRun> {
    first_run::suggest_next(&first, &framework_choices())
}
