//! The desktop app built on Tauri's mock runtime, driven by real IPC
//! requests the way the UI sends them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{
    get_ipc_response, mock_builder, mock_context, noop_assets, MockRuntime, INVOKE_KEY,
};
use tauri::webview::InvokeRequest;
use tauri::{Manager, WebviewWindow};
use trainbench_studio::notify::Notice;
use trainbench_studio::settings::Settings;
use trainbench_studio::{configure, Studio};

pub struct App {
    pub _app: tauri::App<MockRuntime>,
    pub window: WebviewWindow<MockRuntime>,
    pub dir: PathBuf,
    /// The notices the app would show as system notifications, in order
    /// (the mock runtime has no window to be in front or not; the real
    /// window's are checked by the end-to-end test).
    pub told: Arc<Mutex<Vec<Notice>>>,
}

pub fn scratch(name: &str) -> PathBuf {
    super::scratch(&format!("studio-{name}"))
}

pub fn setup_env() {
    // The libtorch worker lives beside the test binary's folder (target/debug).
    std::env::set_var(
        "TRAINBENCH_WORKER_TCH",
        super::built_binary("trainbench-worker-tch"),
    );
    std::env::set_var("TRAINBENCH_NO_NVML", "1");
    std::env::set_var("OMP_NUM_THREADS", "1");
}

pub fn open_app(dir: &Path) -> App {
    setup_env();
    open_app_without_worker(dir)
}

/// The app on `dir`'s database for a test that trains nothing (no worker
/// needs to be built).
pub fn open_app_without_worker(dir: &Path) -> App {
    std::env::set_var("TRAINBENCH_NO_NVML", "1");
    std::env::set_var("OMP_NUM_THREADS", "1");
    let settings = Settings::at(&dir.join("studio.sqlite"), &dir.join("studio.json"));
    let studio = Studio::new(settings).expect("studio opens its database");
    let told = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&told);
    studio.queue.notifier().install(Box::new(move |n: &Notice| {
        into.lock().expect("notices").push(n.clone())
    }));
    let app = configure(mock_builder(), studio)
        .build(mock_context(noop_assets()))
        .expect("mock app builds");
    let window = tauri::WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .expect("mock window");
    App {
        _app: app,
        window,
        dir: dir.to_path_buf(),
        told,
    }
}

/// Invokes a command on `window` the way the UI does (from any thread);
/// `Err` holds the `{code, message}` error.
pub fn call_on(
    window: &WebviewWindow<MockRuntime>,
    cmd: &str,
    args: Value,
) -> Result<Value, Value> {
    let res = get_ipc_response(
        window,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().expect("url"),
            body: InvokeBody::Json(args),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    );
    res.map(|b| b.deserialize::<Value>().expect("JSON response"))
}

impl App {
    /// Invokes a command the way the UI does; `Err` holds the `{code, message}` error.
    pub fn call(&self, cmd: &str, args: Value) -> Result<Value, Value> {
        call_on(&self.window, cmd, args)
    }

    pub fn ok(&self, cmd: &str, args: Value) -> Value {
        self.call(cmd, args)
            .unwrap_or_else(|e| panic!("{cmd} failed: {e}"))
    }

    pub fn err(&self, cmd: &str, args: Value) -> Value {
        match self.call(cmd, args) {
            Ok(v) => panic!("{cmd} should have failed, returned {v}"),
            Err(e) => e,
        }
    }

    pub fn studio(&self) -> tauri::State<'_, Studio> {
        self.window.state::<Studio>()
    }

    /// Waits until the queue has nothing unfinished.
    pub fn wait_idle(&self, limit: Duration) {
        let start = Instant::now();
        while self.ok("unfinished_runs", json!({})).as_u64() != Some(0) {
            assert!(
                start.elapsed() < limit,
                "runs still unfinished after {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

pub fn request(extra: Value) -> Value {
    let mut r = json!({
        "model": ["resnet_mini"], "framework": ["tch"], "precision": ["fp32"], "compile": ["off"],
        "devices": [1], "parallel": null, "batch_size": [16], "device": null, "steps": 24,
        "epochs": null, "data": "synthetic", "num_classes": null, "target_accuracy": null,
        "stop_at_target": true, "window_steps": 4, "threads": 1, "lr": null, "repeats": 1, "price": null
    });
    if let (Some(r), Some(e)) = (r.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            r.insert(k.clone(), v.clone());
        }
    }
    r
}

pub fn assert_error(e: &Value, code: &str, needles: &[&str]) {
    assert_eq!(e["code"], code, "error {e}");
    let m = e["message"].as_str().unwrap_or_default();
    for n in needles {
        assert!(m.contains(n), "message {m:?} should mention {n:?}");
    }
}
