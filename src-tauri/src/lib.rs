//! TrainBench Studio, the desktop app: a thin Tauri shell over the use cases
//! of `trainbench-app`, the layer the CLI uses too. The UI lives in
//! `ui/`; its TypeScript bindings (`ui/src/bindings.ts`) are generated from
//! the commands here by tauri-specta (`cargo test -p trainbench-studio`
//! fails when the committed file differs; `UPDATE_BINDINGS=1` rewrites it).
//!
//! Modules:
//! - [`commands`]: the commands the UI calls, by area.
//! - [`error`]: errors as the UI receives them.
//! - [`live_run`]: what the live view of one queued run shows, and what its
//!   watchers have been sent.
//! - [`live_telemetry`]: a live run's telemetry with a bounded number of points
//!   per source, so the live view of a day-long run on 8 GPUs.
//! - [`narration`]: a long task the window waits for, told in words as it goes:
//!   the wizard's batch search.
//! - [`notify`]: a system notification when a run, a sweep, a search or a
//!   bisection ends while the window is not in front.
//! - [`queue`]: the run queue: one configuration at a time, on its own thread
//!   with its own database connection, so the window stays responsive while a
//!   worker trains.
//! - [`settings`]: the settings as the window shows them: the database in use
//!   (and why that one), the theme, and where the settings file is.

pub mod commands;
pub mod error;
pub mod live_run;
pub mod live_telemetry;
pub mod narration;
pub mod notify;
pub mod queue;
pub mod settings;

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use tauri::{Emitter, Manager, Runtime};
use trainbench_app::{AppError, Host, RunnerOptions, Workspace};

use crate::error::{ApiError, ApiResult};
use crate::queue::Queue;
use crate::settings::{Settings, Theme};

/// The app's state: one database connection for the UI's reads and writes
/// (the queue thread has its own), the queue, the machine, the settings.
pub struct Studio {
    workspace: Mutex<Workspace>,
    settings: Mutex<Settings>,
    pub queue: Queue,
    pub host: Host,
    /// Framework installs under way (the wizard's Install), cancellable.
    pub installs: std::sync::Arc<trainbench_app::frameworks::Installs>,
    /// The wizard's batch search, its progress and Cancel.
    pub searches: std::sync::Arc<narration::Narration>,
    /// A remote host's add or check, step by step.
    pub host_steps: std::sync::Arc<narration::Narration>,
    /// A bisection over a framework's releases, step by step, and Cancel.
    pub bisections: std::sync::Arc<narration::Narration>,
    /// A search for the fastest setup: its lines, its candidates, Cancel.
    pub tunes: std::sync::Arc<commands::tune::Tunes>,
    /// Why the database the settings name could not be opened: the app then
    /// works on a database in memory and asks for another file.
    database_problem: Mutex<Option<String>>,
}

impl std::fmt::Debug for Studio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Studio")
            .field("queue", &self.queue)
            .finish()
    }
}

impl Studio {
    /// Opens the database the settings name; marks runs left `running` by a
    /// studio that stopped as interrupted. A database that cannot be opened
    /// (from a newer studio, damaged, another program's) does not stop the
    /// app: it opens on an empty database in memory, and the window shows
    /// why and asks for another file ([`Studio::database_problem`]).
    pub fn new(settings: Settings) -> Result<Studio, AppError> {
        let (workspace, problem) = match Workspace::open(std::path::Path::new(&settings.database)) {
            Ok((w, _)) => (w, None),
            Err(e) => (Workspace::in_memory()?, Some(e.to_string())),
        };
        Ok(Studio {
            workspace: Mutex::new(workspace),
            settings: Mutex::new(settings),
            queue: Queue::start(RunnerOptions::default()),
            host: Host::open(),
            installs: std::sync::Arc::default(),
            searches: std::sync::Arc::default(),
            host_steps: std::sync::Arc::default(),
            bisections: std::sync::Arc::default(),
            tunes: std::sync::Arc::default(),
            database_problem: Mutex::new(problem),
        })
    }

    /// Why the settings' database could not be opened, until another is chosen.
    pub fn database_problem(&self) -> Option<String> {
        self.database_problem
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn workspace_lock(&self) -> MutexGuard<'_, Workspace> {
        self.workspace
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A use case on the UI's database connection.
    pub fn with<T>(&self, f: impl FnOnce(&mut Workspace) -> Result<T, AppError>) -> ApiResult<T> {
        Ok(f(&mut self.workspace_lock())?)
    }

    pub fn settings(&self) -> Settings {
        self.settings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub fn db_path(&self) -> PathBuf {
        PathBuf::from(self.settings().database)
    }

    fn update_settings(
        &self,
        f: impl FnOnce(&Settings) -> Result<Settings, AppError>,
    ) -> ApiResult<Settings> {
        let mut s = self
            .settings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let next = f(&s)?;
        *s = next.clone();
        Ok(next)
    }

    pub fn set_database(&self, path: PathBuf) -> ApiResult<Settings> {
        if self.queue.unfinished() > 0 {
            return Err(ApiError::new(
                trainbench_app::ErrorCode::Busy,
                "runs are queued or running: wait for them or cancel them before switching databases",
            ));
        }
        if path.as_os_str().is_empty() || path.is_dir() {
            return Err(AppError::bad_input(
                "database",
                path.display(),
                "a SQLite file (new or existing), not a folder",
            )
            .into());
        }
        let (workspace, _) = Workspace::open(&path)?;
        let settings = self.update_settings(|s| s.with_database(&path))?;
        *self.workspace_lock() = workspace;
        *self
            .database_problem
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        Ok(settings)
    }

    pub fn set_theme(&self, theme: Theme) -> ApiResult<Settings> {
        self.update_settings(|s| s.with_theme(theme))
    }
}

/// Every command, for the invoke handler and the TypeScript bindings.
pub fn specta_builder<R: Runtime>() -> tauri_specta::Builder<R> {
    tauri_specta::Builder::<R>::new()
        .commands(tauri_specta::collect_commands![
            commands::info::app_info,
            commands::first_run::quick_benchmark,
            commands::first_run::suggest_next_run,
            commands::sweeps::plan,
            commands::sweeps::start_sweep,
            commands::sweeps::watch_run,
            commands::sweeps::queue_entries,
            commands::sweeps::cancel_run,
            commands::sweeps::unfinished_runs,
            commands::sweeps::quit,
            commands::sweeps::batch_search_status,
            commands::sweeps::cancel_batch_search,
            commands::own_model::search_models,
            commands::own_model::find_models,
            commands::own_model::describe_model,
            commands::runs::list_runs,
            commands::runs::run_detail,
            commands::runs::delete_runs,
            commands::runs::abandon_run,
            commands::runs::attach_run,
            commands::record::vs_record,
            commands::record::compare_record,
            commands::record::projection_targets,
            commands::record::what_if,
            commands::compare::compare,
            commands::sessions::list_sessions,
            commands::sessions::save_session,
            commands::sessions::update_session,
            commands::sessions::open_session,
            commands::sessions::rename_session,
            commands::sessions::delete_session,
            commands::files::export_pdf,
            commands::files::export_html,
            commands::files::export_csv,
            commands::files::export_chart,
            commands::files::export_run_csv,
            commands::files::export_session,
            commands::files::import_session,
            commands::settings::prices,
            commands::settings::save_price,
            commands::settings::delete_price,
            commands::settings::environments,
            commands::settings::install_framework,
            commands::settings::install_releases,
            commands::settings::framework_releases,
            commands::bisect::start_bisect,
            commands::bisect::bisect_status,
            commands::bisect::cancel_bisect,
            commands::tune::start_tune,
            commands::tune::tune_status,
            commands::tune::cancel_tune,
            commands::settings::cancel_install,
            commands::settings::settings,
            commands::settings::set_database,
            commands::settings::set_theme,
            commands::hosts::list_hosts,
            commands::hosts::add_host,
            commands::hosts::check_host,
            commands::hosts::remove_host,
            commands::hosts::host_steps,
        ])
        // Run ids, byte counts and nanosecond stamps stay far below 2^53.
        .dangerously_cast_bigints_to_number()
        // One type per DTO (what Rust sends); inputs are built from the same shapes.
        .disable_serde_phases()
}

/// Where the committed bindings live.
pub fn bindings_path() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ui/src/bindings.ts"
    ))
}

/// Writes the TypeScript bindings to `path`.
pub fn export_bindings(path: &std::path::Path) -> Result<(), String> {
    specta_builder::<tauri::Wry>()
        .export(
            specta_typescript::Typescript::default()
                .header("// Generated by tauri-specta from src-tauri (cargo test -p trainbench-studio). Do not edit.\n"),
            path,
        )
        .map_err(|e| e.to_string())
}

/// The app on any runtime: `tauri::Builder::default()` for the real window,
/// `tauri::test::mock_builder()` for the command tests.
pub fn configure<R: Runtime>(builder: tauri::Builder<R>, studio: Studio) -> tauri::Builder<R> {
    let specta = specta_builder::<R>();
    builder
        .plugin(tauri_plugin_dialog::init())
        .manage(studio)
        .setup(|app| {
            // Ends are told by system notification while the window is not
            // in front (unless a test installed its own sink first).
            if let Some(studio) = app.try_state::<Studio>() {
                let sink = notify::desktop_sink(app.handle().clone());
                studio.queue.notifier().install(sink);
            }
            Ok(())
        })
        .invoke_handler(specta.invoke_handler())
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::CloseRequested { api, .. } = event {
                let busy = window
                    .try_state::<Studio>()
                    .is_some_and(|s| s.queue.unfinished() > 0);
                if busy {
                    // The UI asks; it calls `quit` and closes the window if the person agrees.
                    api.prevent_close();
                    let _ = window.emit("close-requested", ());
                }
            }
        })
}

/// Runs the desktop app until its window closes.
pub fn run() -> Result<(), String> {
    let settings = Settings::load();
    let studio = Studio::new(settings).map_err(|e| e.to_string())?;
    configure(tauri::Builder::default(), studio)
        .run(tauri::generate_context!())
        .map_err(|e| e.to_string())
}
