-- Read-only views for `trainbench query` (docs/query.md lists every column
-- and its unit). A view's name and columns are a stable contract: the tables
-- beneath them may change, and a later migration that changes a table
-- recreates the views with the same columns: a table rebuilt (made anew,
-- the old one dropped, the new one renamed) needs the views over it dropped
-- first, since SQLite checks every view when a table is renamed. Columns
-- may be added at the end; none is renamed or removed.

-- One row per run: its configuration and the headline figures of its
-- summary (NULL while it has none: queued, running, or failed early).
CREATE VIEW q_runs AS
SELECT
    r.id                                              AS run_id,
    r.sweep_id                                        AS sweep_id,
    r.config_key                                      AS config_key,
    r.repeat_index                                    AS repeat_index,
    r.status                                          AS status,
    r.status_reason                                   AS status_reason,
    r.error_class                                     AS error_class,
    r.framework                                       AS framework,
    r.environment                                     AS environment,
    r.model                                           AS model,
    r.precision                                       AS precision,
    r.compile                                         AS compile,
    r.parallel                                        AS parallel,
    r.device                                          AS device,
    r.devices                                         AS devices,
    r.batch_size                                      AS batch_size,
    json_extract(s.summary_json, '$.global_batch')    AS global_batch,
    r.data                                            AS data,
    r.created_unix_ms                                 AS created_unix_ms,
    r.started_unix_ms                                 AS started_unix_ms,
    r.ended_unix_ms                                   AS ended_unix_ms,
    r.param_count                                     AS param_count,
    r.flops_per_sample                                AS flops_per_sample,
    json_extract(s.summary_json, '$.throughput_samples_per_s') AS throughput_samples_per_s,
    json_extract(s.summary_json, '$.throughput_ci95.low')      AS throughput_ci95_low,
    json_extract(s.summary_json, '$.throughput_ci95.high')     AS throughput_ci95_high,
    json_extract(s.summary_json, '$.tokens_per_s')             AS tokens_per_s,
    json_extract(s.summary_json, '$.windows_total')
      - json_extract(s.summary_json, '$.windows_warmup')       AS steady_windows,
    json_extract(s.summary_json, '$.time_to_first_step_s')     AS time_to_first_step_s,
    json_extract(s.summary_json, '$.peak_memory_bytes')        AS peak_memory_bytes,
    json_extract(s.summary_json, '$.peak_memory_source')       AS peak_memory_source,
    json_extract(s.summary_json, '$.peak_memory_device')       AS peak_memory_device,
    json_extract(s.summary_json, '$.mfu')                      AS mfu,
    json_extract(s.summary_json, '$.target_accuracy')          AS target_accuracy,
    json_extract(s.summary_json, '$.best_accuracy')            AS best_accuracy,
    json_extract(s.summary_json, '$.time_to_accuracy_s')       AS time_to_accuracy_s,
    json_extract(s.summary_json, '$.target_loss')              AS target_loss,
    json_extract(s.summary_json, '$.best_loss')                AS best_loss,
    json_extract(s.summary_json, '$.time_to_loss_s')           AS time_to_loss_s,
    json_extract(s.summary_json, '$.target_reached')           AS target_reached,
    json_extract(s.summary_json, '$.epoch_time_s')             AS epoch_time_s,
    json_extract(s.summary_json, '$.cost_per_epoch_usd')       AS cost_per_epoch_usd,
    json_extract(s.summary_json, '$.cost_is_projected')        AS cost_is_projected,
    json_extract(s.summary_json, '$.price_offering')           AS price_offering,
    json_extract(s.summary_json, '$.energy_j_per_sample')      AS energy_j_per_sample,
    json_array_length(s.summary_json, '$.warnings')            AS warnings,
    CASE WHEN r.origin_json IS NULL THEN 0 ELSE 1 END          AS imported
FROM runs r
LEFT JOIN summaries s ON s.run_id = r.id;

-- One row per timing window of a run, warm-up windows included and marked
-- (the summary's warm-up rule excludes leading windows; NULL without one).
CREATE VIEW q_windows AS
SELECT
    w.run_id                                  AS run_id,
    w.idx                                     AS window,
    w.first_step                              AS first_step,
    w.steps                                   AS steps,
    w.samples                                 AS samples,
    w.start_ns                                AS start_ns,
    w.end_ns                                  AS end_ns,
    (w.end_ns - w.start_ns) / 1e9             AS seconds,
    CASE WHEN w.end_ns > w.start_ns
         THEN w.samples / ((w.end_ns - w.start_ns) / 1e9) END AS samples_per_s,
    w.loss_mean                               AS loss_mean,
    w.lr                                      AS lr,
    CASE WHEN s.run_id IS NULL THEN NULL
         WHEN w.idx < json_extract(s.summary_json, '$.windows_warmup') THEN 1
         ELSE 0 END                           AS warmup
FROM windows w
LEFT JOIN summaries s ON s.run_id = w.run_id;

-- One row per evaluation on held-out data.
CREATE VIEW q_evals AS
SELECT run_id, step, epoch, elapsed_s, accuracy, loss, samples, t_ns
FROM evals;

-- One row per telemetry sample and source ('host', or 'gpu:N').
CREATE VIEW q_telemetry AS
SELECT
    run_id, t_ns, source, cpu_percent, rss_bytes, host_cpu_percent,
    mem_used_bytes, util_percent, power_w, energy_mj, sm_clock_mhz,
    mem_clock_mhz, throttle_reasons, other_processes
FROM telemetry;

-- One row per sweep: the runs one command queued, with what kind of
-- command it was and how many runs are stored.
CREATE VIEW q_sweeps AS
SELECT
    w.id                 AS sweep_id,
    w.created_unix_ms    AS created_unix_ms,
    w.command            AS command,
    CASE
        WHEN EXISTS (SELECT 1 FROM tunes t WHERE t.sweep_id = w.id) THEN 'tune'
        WHEN EXISTS (SELECT 1 FROM bisections b WHERE b.sweep_id = w.id) THEN 'bisect'
        ELSE 'run'
    END                  AS kind,
    w.configurations     AS configurations,
    w.repeats            AS repeats,
    (SELECT COUNT(*) FROM runs r WHERE r.sweep_id = w.id) AS runs,
    (SELECT COUNT(*) FROM runs r WHERE r.sweep_id = w.id AND r.status = 'completed') AS completed_runs
FROM sweeps w;
