//! TrainBench Studio, the desktop app: a thin Tauri shell over the same
//! services the CLI uses (runner, store, report, probe). The UI lives in
//! `ui/`; its TypeScript bindings (`ui/src/bindings.ts`) are generated from
//! the commands here by tauri-specta (`cargo test -p trainbench-studio`
//! fails when the committed file differs; `UPDATE_BINDINGS=1` rewrites it).

pub mod commands;
pub mod error;
pub mod queue;
pub mod settings;

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use tauri::{Emitter, Manager, Runtime};
use trainbench_probe::GpuProbe;
use trainbench_runner::RunnerOptions;
use trainbench_store::{Store, StoreError};

use crate::error::{ApiError, ApiResult};
use crate::queue::Queue;
use crate::settings::{Settings, Theme};

/// The app's state: one database connection for the UI's reads and writes
/// (the queue thread has its own), the queue, the GPU probe, the settings.
pub struct Studio {
    store: Mutex<Store>,
    settings: Mutex<Settings>,
    pub queue: Queue,
    pub gpu: GpuProbe,
}

impl std::fmt::Debug for Studio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Studio")
            .field("queue", &self.queue)
            .finish()
    }
}

fn open(path: &std::path::Path) -> Result<Store, StoreError> {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let store = Store::open(path)?;
    store.mark_interrupted()?;
    Ok(store)
}

impl Studio {
    /// Opens the database the settings name; marks runs left `running` by a
    /// studio that stopped as interrupted.
    pub fn new(settings: Settings) -> Result<Studio, StoreError> {
        let store = open(std::path::Path::new(&settings.database))?;
        Ok(Studio {
            store: Mutex::new(store),
            settings: Mutex::new(settings),
            queue: Queue::start(RunnerOptions::default()),
            gpu: GpuProbe::open(),
        })
    }

    fn store_lock(&self) -> MutexGuard<'_, Store> {
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn with_store<T>(&self, f: impl FnOnce(&Store) -> Result<T, StoreError>) -> ApiResult<T> {
        Ok(f(&self.store_lock())?)
    }

    pub fn with_store_mut<T>(
        &self,
        f: impl FnOnce(&mut Store) -> Result<T, StoreError>,
    ) -> ApiResult<T> {
        Ok(f(&mut self.store_lock())?)
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

    pub fn cpu_cores(&self) -> u32 {
        std::thread::available_parallelism()
            .map(|n| u32::try_from(n.get()).unwrap_or(1))
            .unwrap_or(1)
    }

    fn update_settings(&self, f: impl FnOnce(&mut Settings)) -> ApiResult<Settings> {
        let mut s = self
            .settings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut next = s.clone();
        f(&mut next);
        next.save()
            .map_err(|e| ApiError::new("io", format!("saving {}: {e}", next.file)))?;
        *s = next.clone();
        Ok(next)
    }

    pub fn set_database(&self, path: PathBuf) -> ApiResult<Settings> {
        if self.queue.unfinished() > 0 {
            return Err(ApiError::new(
                "busy",
                "runs are queued or running: wait for them or cancel them before switching databases",
            ));
        }
        if path.as_os_str().is_empty() || path.is_dir() {
            return Err(ApiError::bad_input(
                "database",
                path.display(),
                "a SQLite file (new or existing), not a folder",
            ));
        }
        let store = open(&path)?;
        let settings = self.update_settings(|s| s.database = path.display().to_string())?;
        *self.store_lock() = store;
        Ok(settings)
    }

    pub fn set_theme(&self, theme: Theme) -> ApiResult<Settings> {
        self.update_settings(|s| s.theme = theme)
    }
}

/// Every command, for the invoke handler and the TypeScript bindings.
pub fn specta_builder<R: Runtime>() -> tauri_specta::Builder<R> {
    tauri_specta::Builder::<R>::new()
        .commands(tauri_specta::collect_commands![
            commands::app_info,
            commands::plan,
            commands::start_sweep,
            commands::watch_run,
            commands::queue_entries,
            commands::cancel_run,
            commands::unfinished_runs,
            commands::quit,
            commands::list_runs,
            commands::run_detail,
            commands::delete_runs,
            commands::compare,
            commands::list_sessions,
            commands::save_session,
            commands::update_session,
            commands::open_session,
            commands::rename_session,
            commands::delete_session,
            commands::export_pdf,
            commands::export_csv,
            commands::export_session,
            commands::import_session,
            commands::prices,
            commands::save_price,
            commands::environments,
            commands::install_framework,
            commands::settings,
            commands::set_database,
            commands::set_theme,
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
    let settings = Settings::load(&settings::config_dir());
    let studio = Studio::new(settings).map_err(|e| e.to_string())?;
    configure(tauri::Builder::default(), studio)
        .run(tauri::generate_context!())
        .map_err(|e| e.to_string())
}
