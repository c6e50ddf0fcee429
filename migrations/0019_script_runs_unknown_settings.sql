-- A training script's run sets its own precision, compile mode, sharding
-- and data (the studio only counts its steps): q_runs said the harness's
-- defaults for them (fp32, off, ddp, synthetic), which the script may not
-- use. They are now NULL for such a run (`model` = `script:PATH.py`), as
-- any figure not known is; the columns and their order are unchanged.
DROP VIEW q_runs;
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
    CASE WHEN r.model LIKE 'script:%' THEN NULL ELSE r.precision END AS precision,
    CASE WHEN r.model LIKE 'script:%' THEN NULL ELSE r.compile END AS compile,
    CASE WHEN r.model LIKE 'script:%' THEN NULL ELSE r.parallel END AS parallel,
    r.device                                          AS device,
    r.devices                                         AS devices,
    r.batch_size                                      AS batch_size,
    json_extract(s.summary_json, '$.global_batch')    AS global_batch,
    CASE WHEN r.model LIKE 'script:%' THEN NULL ELSE r.data END AS data,
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
