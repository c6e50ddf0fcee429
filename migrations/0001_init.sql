-- TrainBench store, schema 1. Forward-only: later changes are new files.

-- A sweep: the runs one `trainbench run` invocation queued (its configurations
-- × repeats, interleaved).
CREATE TABLE sweeps (
    id              INTEGER PRIMARY KEY,
    created_unix_ms INTEGER NOT NULL,
    command         TEXT NOT NULL,
    configurations  INTEGER NOT NULL,
    repeats         INTEGER NOT NULL
);

CREATE TABLE runs (
    id               INTEGER PRIMARY KEY,
    sweep_id         INTEGER REFERENCES sweeps(id) ON DELETE SET NULL,
    -- Runs with the same config_key are repeats of one configuration.
    config_key       TEXT NOT NULL,
    repeat_index     INTEGER NOT NULL DEFAULT 0,
    framework        TEXT NOT NULL,
    model            TEXT NOT NULL,
    precision        TEXT NOT NULL,
    device           TEXT NOT NULL,
    devices          INTEGER NOT NULL,
    batch_size       INTEGER NOT NULL,
    data             TEXT NOT NULL,
    spec_json        TEXT NOT NULL,
    price_offering   TEXT,
    status           TEXT NOT NULL CHECK (status IN
                       ('queued', 'running', 'completed', 'failed', 'timeout', 'cancelled', 'interrupted')),
    status_reason    TEXT,
    error_class      TEXT,
    exit_code        INTEGER,
    stderr_tail      TEXT,
    created_unix_ms  INTEGER NOT NULL,
    started_unix_ms  INTEGER,
    ended_unix_ms    INTEGER,
    -- From the worker's hello event.
    hello_json       TEXT,
    param_count      INTEGER,
    flops_per_sample REAL,
    first_step_s     REAL,
    train_start_ns   INTEGER,
    done_reason      TEXT,
    provenance_json  TEXT,
    -- The studio process running it: a run left 'running' whose runner is gone
    -- was interrupted.
    runner_pid       INTEGER
);
CREATE INDEX runs_config ON runs(config_key);
CREATE INDEX runs_status ON runs(status);

CREATE TABLE windows (
    run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx        INTEGER NOT NULL,
    first_step INTEGER NOT NULL,
    steps      INTEGER NOT NULL,
    samples    INTEGER NOT NULL,
    start_ns   INTEGER NOT NULL,
    end_ns     INTEGER NOT NULL,
    loss_mean  REAL NOT NULL,
    lr         REAL NOT NULL,
    PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;

CREATE TABLE evals (
    run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step      INTEGER NOT NULL,
    epoch     REAL NOT NULL,
    elapsed_s REAL NOT NULL,
    accuracy  REAL NOT NULL,
    loss      REAL NOT NULL,
    samples   INTEGER NOT NULL,
    t_ns      INTEGER NOT NULL,
    PRIMARY KEY (run_id, step)
) WITHOUT ROWID;

CREATE TABLE memory_peaks (
    run_id              INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    device              TEXT NOT NULL,
    source              TEXT NOT NULL,
    peak_bytes          INTEGER NOT NULL,
    reserved_peak_bytes INTEGER,
    PRIMARY KEY (run_id, device, source)
) WITHOUT ROWID;

-- Telemetry sampled by the runner: one row per sample and source
-- ('host' for the worker process and the machine, 'gpu:N' from NVML).
CREATE TABLE telemetry (
    run_id            INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    t_ns              INTEGER NOT NULL,
    source            TEXT NOT NULL,
    cpu_percent       REAL,
    rss_bytes         INTEGER,
    host_cpu_percent  REAL,
    mem_used_bytes    INTEGER,
    util_percent      REAL,
    power_w           REAL,
    energy_mj         INTEGER,
    sm_clock_mhz      INTEGER,
    mem_clock_mhz     INTEGER,
    throttle_reasons  INTEGER,
    PRIMARY KEY (run_id, source, t_ns)
) WITHOUT ROWID;

CREATE TABLE summaries (
    run_id          INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    computed_unix_ms INTEGER NOT NULL,
    summary_json    TEXT NOT NULL
);

CREATE TABLE prices (
    offering            TEXT PRIMARY KEY,
    devices             INTEGER NOT NULL CHECK (devices >= 1),
    device              TEXT NOT NULL,
    usd_per_hour        REAL NOT NULL CHECK (usd_per_hour >= 0),
    usd_per_device_hour REAL NOT NULL CHECK (usd_per_device_hour >= 0),
    as_of               TEXT NOT NULL,
    source              TEXT NOT NULL,
    edited_by_user      INTEGER NOT NULL DEFAULT 0
);
