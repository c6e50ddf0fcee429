import type { CompareEntry, CompareView, MetricValue, RunListItem } from "../src/bindings";

export function mv(value: number | null, extra: Partial<MetricValue> = {}): MetricValue {
  return { value, ci95: null, note: null, delta_vs_baseline: null, ...extra };
}

export function entry(key: string, label: string, runIds: number[], metrics: CompareEntry["metrics"]): CompareEntry {
  return {
    key,
    label,
    run_ids: runIds,
    runs_completed: runIds.length,
    framework: "tch",
    model: "resnet_mini",
    precision: "fp32",
    devices: 1,
    batch_size: 64,
    global_batch: 64,
    data: "synthetic",
    param_count: 1000,
    metrics,
    scaling_efficiency: null,
    single_device_entry: null,
  };
}

/** Two entries: fp32 (baseline) and bf16, bf16 faster with intervals, no price chosen. */
export function view(): CompareView {
  return {
    comparison: {
      grouping: "runs",
      baseline: 0,
      entries: [
        entry("1", "tch resnet_mini fp32", [1], {
          throughput: mv(100, { ci95: { low: 95, high: 104 } }),
          peak_memory: mv(512),
          cost_per_epoch: mv(null, { note: "no price chosen" }),
          time_to_accuracy: mv(null, { note: "not reached" }),
        }),
        entry("2", "tch resnet_mini amp-bf16", [2], {
          throughput: mv(150, { ci95: { low: 140, high: 161 }, delta_vs_baseline: 0.5 }),
          peak_memory: mv(400, { delta_vs_baseline: -0.21875 }),
          cost_per_epoch: mv(null, { note: "no price chosen" }),
          time_to_accuracy: mv(null, { note: "not reached" }),
        }),
      ],
      decisions: [
        { metric: "throughput", winner: 1, runner_up: 0, margin: 0.5, confidence: "clear" },
        { metric: "peak_memory", winner: 1, runner_up: 0, margin: 0.21875, confidence: "point_values" },
        { metric: "cost_per_epoch", winner: null, runner_up: null, margin: null, confidence: null },
        { metric: "time_to_accuracy", winner: null, runner_up: null, margin: null, confidence: null },
      ],
      scaling: [],
      warnings: ["parameter counts differ"],
    },
    colours: ["#0072b2", "#e69f00"],
    throughput_curves: [
      { entry: 0, run_id: 1, points: [[1, 90], [2, 100]], steps: [10, 20], steady_from_s: 0.5 },
      { entry: 1, run_id: 2, points: [[1.5, 140], [2, 150]], steps: [10, 20], steady_from_s: 1 },
    ],
    loss_curves: [],
    accuracy_curves: [],
    charts: [],
    decided_by: null,
  };
}

export function run(id: number, patch: Partial<RunListItem> = {}): RunListItem {
  return {
    id,
    status: "completed",
    status_reason: null,
    label: `tch resnet_mini fp32 #${id}`,
    framework: "tch",
    model: "resnet_mini",
    precision: "fp32",
    devices: 1,
    batch_size: 64,
    data: "synthetic",
    created_unix_ms: 1_700_000_000_000 + id,
    duration_s: 10,
    throughput: 100 + id,
    throughput_low: null,
    throughput_high: null,
    peak_memory_bytes: 1 << 20,
    time_to_accuracy_s: null,
    target_accuracy: null,
    target_reached: null,
    cost_per_epoch_usd: null,
    cost_is_projected: false,
    price_offering: null,
    imported_from: null,
    host: "vm",
    gpu: null,
    framework_version: "2.13.0",
    mfu: null,
    energy_j_per_sample: null,
    ...patch,
  };
}
