//! A Ray cluster (or a KubeRay one: the same API): each run a job
//! submitted to the head's job-submission API over HTTP. The kit (the
//! studio's command-line program and the Python workers) is uploaded once
//! per version as a package and unpacked by Ray as the job's working
//! folder; the job's entry point is the studio's agent, which runs the
//! worker as on any host and echoes its journal to the job's log, which
//! the studio reads from its stored offset. `stop` cancels (Ray sends the
//! agent SIGTERM).

use std::time::Duration;

use serde_json::{json, Value};
use trainbench_core::spec::Device;
use trainbench_store::RemoteRun;

use super::http::{request, Reply};
use super::reader::Fetch;
use super::{JobState, Launch, Launcher, Reader, Started};
use crate::address::RayUrl;
use crate::error::{RemoteError, RemoteResult};
use crate::hosts::RemoteHost;
use crate::kit::LocalKit;
use crate::shell::quote;

/// The folder on a node that holds the runs' folders.
pub(crate) const RUNS_ROOT: &str = "/tmp/trainbench-ray";

/// A Ray cluster's job API.
#[derive(Debug, Clone)]
pub(crate) struct RayApi {
    head: String,
    port: u16,
}

impl RayApi {
    pub(crate) fn of(url: &RayUrl) -> RayApi {
        RayApi {
            head: url.head.clone(),
            port: url.api_port,
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<(&[u8], &str)>) -> Result<Reply, String> {
        request(
            &self.head,
            self.port,
            method,
            path,
            body,
            Duration::from_secs(60),
        )
    }

    /// `method path` whose reply must be 200 and JSON.
    fn json(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
        let text = body.map(Value::to_string);
        let r = self.call(
            method,
            path,
            text.as_deref().map(|t| (t.as_bytes(), "application/json")),
        )?;
        if r.status != 200 {
            return Err(format!(
                "the Ray cluster at {}:{} answered {method} {path} with {}: {}",
                self.head,
                self.port,
                r.status,
                trainbench_core::text::cut(r.text(), 400)
            ));
        }
        serde_json::from_slice(&r.body).map_err(|e| format!("{method} {path}: not JSON: {e}"))
    }

    pub(crate) fn version(&self) -> Result<String, String> {
        let v = self.json("GET", "/api/version", None)?;
        Ok(v["ray_version"].as_str().unwrap_or("?").to_owned())
    }

    /// The cluster's live nodes: (CPUs, GPUs) each.
    pub(crate) fn nodes(&self) -> Result<Vec<(f64, f64)>, String> {
        let v = self.json("GET", "/api/v0/nodes?detail=1&limit=10000", None)?;
        let list = v["data"]["result"]["result"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        Ok(list
            .iter()
            .filter(|n| n["state"] == "ALIVE")
            .map(|n| {
                let r = &n["resources_total"];
                (
                    r["CPU"].as_f64().unwrap_or(0.0),
                    r["GPU"].as_f64().unwrap_or(0.0),
                )
            })
            .collect())
    }

    /// Uploads the kit as `_ray_pkg_HEX.zip` unless the cluster has it;
    /// its URI for a job's `working_dir`.
    pub(crate) fn ensure_kit(
        &self,
        kit: &LocalKit,
        say: &mut dyn FnMut(&str),
    ) -> Result<String, String> {
        let uri = format!("gcs://_ray_pkg_{}.zip", kit.digest_hex());
        if self.has_package(&uri)? {
            return Ok(uri);
        }
        let path = package_path(&uri);
        say(&format!(
            "uploading the studio's kit {} to the Ray cluster",
            kit.version
        ));
        let zip = super::zip::stored_zip(&kit.read_files()?)?;
        let r = self.call("PUT", &path, Some((&zip, "application/zip")))?;
        if r.status != 200 {
            return Err(format!(
                "the Ray cluster refused the kit ({} bytes): {} {}",
                zip.len(),
                r.status,
                trainbench_core::text::cut(r.text(), 400)
            ));
        }
        Ok(uri)
    }

    /// Whether the cluster holds the package `gcs://NAME`.
    pub(crate) fn has_package(&self, uri: &str) -> Result<bool, String> {
        Ok(self.call("GET", &package_path(uri), None)?.status == 200)
    }

    /// Submits a job; its submission id.
    pub(crate) fn submit(&self, body: &Value) -> Result<String, String> {
        let v = self.json("POST", "/api/jobs/", Some(body))?;
        v["submission_id"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("the Ray cluster gave no submission id: {v}"))
    }

    /// A job's status (`PENDING`, `RUNNING`, `STOPPED`, `SUCCEEDED`,
    /// `FAILED`) and message; `None` for a job the cluster does not know.
    pub(crate) fn status(&self, id: &str) -> Result<Option<(String, String)>, String> {
        let r = self.call("GET", &format!("/api/jobs/{}", path_word(id)), None)?;
        if r.status == 404 {
            return Ok(None);
        }
        let v: Value = serde_json::from_slice(&r.body).map_err(|e| format!("job {id}: {e}"))?;
        Ok(Some((
            v["status"].as_str().unwrap_or("").to_owned(),
            v["message"].as_str().unwrap_or("").to_owned(),
        )))
    }

    pub(crate) fn logs(&self, id: &str) -> Result<Vec<u8>, String> {
        let v = self.json("GET", &format!("/api/jobs/{}/logs", path_word(id)), None)?;
        Ok(v["logs"].as_str().unwrap_or("").as_bytes().to_vec())
    }

    pub(crate) fn stop(&self, id: &str) -> Result<(), String> {
        self.json("POST", &format!("/api/jobs/{}/stop", path_word(id)), None)
            .map(|_| ())
    }

    /// Runs `script` as a job and waits (up to `limit`) for it to end; its
    /// log, or why not.
    pub(crate) fn run_script(
        &self,
        id: &str,
        script: &str,
        working_dir: &str,
        env: &[(String, String)],
        limit: Duration,
    ) -> Result<String, String> {
        self.submit(&json!({
            "entrypoint": script,
            "submission_id": id,
            "entrypoint_num_cpus": 1,
            "runtime_env": runtime_env(working_dir, env),
        }))?;
        let start = std::time::Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(500));
            match self.status(id)? {
                Some((s, msg)) if matches!(s.as_str(), "SUCCEEDED" | "FAILED" | "STOPPED") => {
                    let log = String::from_utf8_lossy(&self.logs(id)?).into_owned();
                    if s != "SUCCEEDED" {
                        return Err(format!(
                            "the check job {id} ended {s}: {msg}\n{}",
                            last_lines(&log, 20)
                        ));
                    }
                    return Ok(log);
                }
                _ if start.elapsed() > limit => {
                    let _ = self.stop(id);
                    return Err(format!("the check job {id} did not end within {} s (is a node with a free CPU there?)", limit.as_secs()));
                }
                _ => {}
            }
        }
    }
}

/// The job API's path of the package `gcs://NAME`.
fn package_path(uri: &str) -> String {
    format!(
        "/api/packages/gcs/{}",
        path_word(uri.trim_start_matches("gcs://"))
    )
}

/// A job's id as one path segment: ids the studio makes are letters,
/// digits, `-`, `_` and `.` already; anything else is dropped.
fn path_word(id: &str) -> String {
    id.chars()
        .filter(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c))
        .collect()
}

fn runtime_env(working_dir: &str, env: &[(String, String)]) -> Value {
    let vars: serde_json::Map<String, Value> = env
        .iter()
        .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
        .collect();
    json!({ "working_dir": working_dir, "env_vars": vars })
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

pub(crate) struct RayJobs<'h> {
    pub h: &'h RemoteHost,
    pub url: &'h RayUrl,
}

impl RayJobs<'_> {
    fn api(&self) -> RayApi {
        RayApi::of(self.url)
    }
}

impl Launcher for RayJobs<'_> {
    fn start(&self, launch: &Launch<'_>) -> Result<Started, String> {
        let api = self.api();
        // The kit the check uploaded, while the cluster keeps it; else (a
        // cluster started again) this studio's kit, uploaded now.
        let working_dir = match api.has_package(&launch.inv.kit_dir) {
            Ok(true) => launch.inv.kit_dir.clone(),
            _ => {
                let kit = crate::kit::local_kit().map_err(|e| e.to_string())?;
                api.ensure_kit(&kit, &mut |_| {})?
            }
        };
        let id = format!("trainbench-{}", path_word(launch.name));
        let dir = format!("{RUNS_ROOT}/{id}");
        let json_text = String::from_utf8_lossy(launch.job_json);
        // The working folder is the kit; the agent runs in the run's folder
        // (Ray may unpack the kit again while the job runs, which would
        // leave a process working in the kit's folder nowhere), told where
        // the kit is.
        let entrypoint = format!(
            "set -e; mkdir -p {d}; printf '%s' {j} > {d}/job.json; k=$(pwd); cd {d}; TRAINBENCH_KIT_DIR=\"$k\" exec \"$k/bin/trainbench\" agent run {d} --echo-journal",
            d = quote(&dir),
            j = quote(&json_text),
        );
        let spec = &launch.spec.spec;
        // Marks every process of the job (the agent, the worker), so what
        // runs for it can be told apart on a node.
        let mut env = self.h.env.clone();
        env.push(("TRAINBENCH_RAY_JOB".into(), id.clone()));
        // For a run over several nodes: the interpreter that starts the
        // other nodes as Ray tasks, and the kit they run from.
        if let Some(py) = launch
            .inv
            .cluster
            .as_ref()
            .and_then(|c| c.ray_python.clone())
        {
            env.push(("TRAINBENCH_RAY_PYTHON".into(), py));
        }
        env.push(("TRAINBENCH_RAY_KIT".into(), working_dir.clone()));
        let mut body = json!({
            "entrypoint": entrypoint,
            "submission_id": id,
            "runtime_env": runtime_env(&working_dir, &env),
            "metadata": {"trainbench_run": launch.run_id.to_string()},
        });
        if spec.device == Device::Cpu {
            body["entrypoint_num_cpus"] = json!(1);
        } else {
            body["entrypoint_num_gpus"] = json!(spec.devices);
        }
        let submitted = api.submit(&body)?;
        Ok(Started {
            dir,
            said: Some(format!("[ray] submitted job {submitted} to {}", self.url)),
            place_job: Some(submitted),
        })
    }

    fn state(&self, rr: &RemoteRun) -> Option<JobState> {
        let id = rr.place_job.as_deref()?;
        Some(match self.api().status(id).ok()? {
            None => JobState::Ended {
                state: "unknown to the cluster (was it restarted?)".into(),
                cancelled: false,
            },
            Some((s, _)) => match s.as_str() {
                "PENDING" => JobState::Waiting,
                "RUNNING" => JobState::Running,
                other => JobState::Ended {
                    state: other.to_owned(),
                    cancelled: other == "STOPPED",
                },
            },
        })
    }

    fn ended_unjournaled(&self, rr: &RemoteRun, state: &JobState) -> (String, String) {
        let id = rr.place_job.as_deref().unwrap_or("?");
        let api = self.api();
        let message = api
            .status(id)
            .ok()
            .flatten()
            .map(|(_, m)| m)
            .unwrap_or_default();
        let log = api
            .logs(id)
            .map(|l| String::from_utf8_lossy(&l).into_owned())
            .unwrap_or_default();
        let how = match state {
            JobState::Ended { state, .. } => state.as_str(),
            _ => "",
        };
        (
            format!("Ray job {id} on {} ended {how} before the run's agent wrote its outcome: {message}", self.url),
            last_lines(&log, 20),
        )
    }

    fn cancel(&self, rr: &RemoteRun) -> bool {
        rr.place_job
            .as_deref()
            .is_some_and(|id| self.api().stop(id).is_ok())
    }

    fn reader(&self, rr: &RemoteRun, offset: u64) -> RemoteResult<Reader> {
        let id = rr
            .place_job
            .clone()
            .ok_or_else(|| RemoteError::Internal(format!("run {} has no Ray job id", rr.run_id)))?;
        let api = self.api();
        let fetch: Fetch = std::sync::Arc::new(move || api.logs(&id));
        Ok(Reader::log(fetch, offset))
    }

    fn kind(&self) -> &'static str {
        "ray"
    }

    /// A job's log holds Ray's own lines beside the journal's; cut, since
    /// Ray's first line repeats the whole entry point.
    fn other_line(&self, line: &[u8]) -> String {
        let text = String::from_utf8_lossy(line).trim_end().to_owned();
        format!("[ray] {}", trainbench_core::text::cut(text, 300))
    }
}
