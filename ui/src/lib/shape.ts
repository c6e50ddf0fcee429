// Shapes backend data into what the charts and tables draw. Pure functions:
// tested in test/shape.test.ts.
import type { CompareView, CurveDto, LiveRun, Metric, MetricValue } from "../bindings";
import { delta, NOT_MEASURED, num } from "./format";

export const METRICS: { metric: Metric; title: string; unit: string; higherIsBetter: boolean }[] = [
  { metric: "throughput", title: "Throughput", unit: "samples/s", higherIsBetter: true },
  { metric: "peak_memory", title: "Peak memory", unit: "MiB", higherIsBetter: false },
  { metric: "cost_per_epoch", title: "Cost per epoch", unit: "USD", higherIsBetter: false },
  { metric: "time_to_accuracy", title: "Time to accuracy", unit: "s", higherIsBetter: false },
  { metric: "time_to_loss", title: "Time to loss", unit: "s", higherIsBetter: false },
];

export interface Bar {
  key: string;
  label: string;
  colour: string;
  /** null: not measured; `note` says why. */
  value: number | null;
  low: number | null;
  high: number | null;
  note: string | null;
  hidden: boolean;
}

export function metricOf(view: CompareView, entry: number, metric: Metric): MetricValue | undefined {
  const e = view.comparison.entries[entry];
  return e ? (e.metrics as Partial<Record<Metric, MetricValue>>)[metric] : undefined;
}

/** One bar per comparison entry, with its 95 % interval where there is one. */
/** The entries a metric's chart marks: the winner the comparison decided
 * for it when their 95 % intervals do not overlap (a winner on point values
 * or overlapping intervals is not starred), and the baseline (keys; null
 * where none). */
export function chartMarks(view: CompareView, metric: Metric): { best: string | null; baseline: string | null } {
  const entries = view.comparison.entries;
  const d = view.comparison.decisions.find((x) => x.metric === metric);
  const decided = d?.confidence === "clear" ? d.winner : null;
  return {
    best: decided === null ? null : (entries[decided]?.key ?? null),
    baseline: entries[view.comparison.baseline]?.key ?? null,
  };
}

export function bars(view: CompareView, metric: Metric, hidden: ReadonlySet<string>): Bar[] {
  return view.comparison.entries.map((e, i) => {
    const m = metricOf(view, i, metric);
    const value = m?.value ?? null;
    return {
      key: e.key,
      label: e.label,
      colour: view.colours[i] ?? "#888888",
      value: value !== null && Number.isFinite(value) ? value : null,
      low: m?.ci95?.low ?? null,
      high: m?.ci95?.high ?? null,
      note: m?.note ?? (value === null ? NOT_MEASURED : null),
      hidden: hidden.has(e.key),
    };
  });
}

/** The axis maximum for bars: the largest visible value or interval top, with headroom. */
export function barScale(list: Bar[]): number {
  let max = 0;
  for (const b of list) {
    if (b.hidden) continue;
    max = Math.max(max, b.value ?? 0, b.high ?? 0);
  }
  return max > 0 ? max * 1.1 : 1;
}

export interface CurveSeries {
  label: string;
  colour: string;
  key: string;
  runId: number;
}

/**
 * Curves of several runs on one time axis, as uPlot wants them: the union of
 * every x, and each series' y at its own x (null elsewhere, gaps spanned).
 */
/** What curves are drawn against: time since training started, time since
 * each run's first steady window (lines up runs whose warm-up or compilation
 * took different times), or the training step. */
export type CurveAxis = "time" | "steady" | "step";

export const CURVE_AXES: { axis: CurveAxis; label: string }[] = [
  { axis: "time", label: "s since training started" },
  { axis: "steady", label: "s since the first steady window" },
  { axis: "step", label: "step" },
];

/** A curve's points against `axis`; a run without a steady window is left
 * out of the "steady" view (it has no such moment). */
export function onAxis(c: CurveDto, axis: CurveAxis): CurveDto | null {
  if (axis === "time") return c;
  if (axis === "step") return { ...c, points: c.points.map(([, y], i) => [c.steps[i] ?? null, y]) };
  const t0 = c.steady_from_s;
  if (t0 === null) return null;
  return { ...c, points: c.points.map(([x, y]) => [x === null ? null : Math.round((x - t0) * 1e6) / 1e6, y]) };
}

export function alignCurves(
  curves: CurveDto[],
  view: CompareView,
  hidden: ReadonlySet<string>,
  axis: CurveAxis = "time",
): { data: (number | null)[][]; series: CurveSeries[] } {
  const visible = curves
    .filter((c) => !hidden.has(view.comparison.entries[c.entry]?.key ?? ""))
    .map((c) => onAxis(c, axis))
    .filter((c): c is CurveDto => c !== null);
  const xs = Array.from(new Set(visible.flatMap((c) => c.points.map((p) => p[0]).filter((x): x is number => x !== null && Number.isFinite(x))))).sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const data: (number | null)[][] = [xs];
  const series: CurveSeries[] = [];
  const multi = new Map<number, number>();
  for (const c of visible) multi.set(c.entry, (multi.get(c.entry) ?? 0) + 1);
  for (const c of visible) {
    const ys: (number | null)[] = new Array(xs.length).fill(null);
    for (const [x, y] of c.points) {
      const i = x === null ? undefined : index.get(x);
      if (i !== undefined) ys[i] = y !== null && Number.isFinite(y) ? y : null;
    }
    data.push(ys);
    const e = view.comparison.entries[c.entry];
    series.push({
      label: (multi.get(c.entry) ?? 1) > 1 ? `${e.label} (run #${c.run_id})` : e.label,
      colour: view.colours[c.entry] ?? "#888888",
      key: e.key,
      runId: c.run_id,
    });
  }
  return { data, series };
}

/** Throughput over device count, one line per scaling series (entries differing only in devices). */
export function scalingLines(view: CompareView): { label: string; points: { devices: number; value: number | null; entry: number }[] }[] {
  return view.comparison.scaling.map((s) => ({
    label: s.label,
    points: s.points.map(([devices, entry]) => ({
      devices,
      entry,
      value: metricOf(view, entry, "throughput")?.value ?? null,
    })),
  }));
}

export interface TableCell {
  text: string;
  delta: string;
  ci: string;
  winner: boolean;
}

/** The compare table: one row per entry, a cell per metric with its delta against the baseline. */
export function compareTable(view: CompareView): { key: string; label: string; baseline: boolean; runs: string; cells: TableCell[] }[] {
  const winners = new Map<Metric, number | null>(view.comparison.decisions.map((d) => [d.metric, d.winner]));
  return view.comparison.entries.map((e, i) => ({
    key: e.key,
    label: e.label,
    baseline: i === view.comparison.baseline,
    runs: e.run_ids.map((r) => `#${r}`).join(", "),
    cells: METRICS.map(({ metric }) => {
      const m = metricOf(view, i, metric);
      const v = m?.value ?? null;
      return {
        text: v === null ? m?.note ?? NOT_MEASURED : num(v, 4),
        ci: m?.ci95 ? `${num(m.ci95.low, 4)} – ${num(m.ci95.high, 4)}` : "",
        delta: i === view.comparison.baseline ? "baseline" : delta(m?.delta_vs_baseline),
        winner: winners.get(metric) === i,
      };
    }),
  }));
}

/** The decision matrix in words: which entry wins which metric, and how sure. */
export function decisionRows(view: CompareView): { metric: string; winner: string; margin: string; confidence: string }[] {
  return view.comparison.decisions.map((d) => {
    const meta = METRICS.find((m) => m.metric === d.metric);
    const winner = d.winner === null ? "—" : view.comparison.entries[d.winner]?.label ?? "—";
    const confidence =
      d.confidence === "clear"
        ? "clear (95 % intervals do not overlap)"
        : d.confidence === "overlapping"
          ? "not separated (intervals overlap)"
          : d.confidence === "point_values"
            ? "on point values (no interval)"
            : d.confidence === "alone"
              ? "only entry with this metric"
              : "not measured";
    return {
      metric: meta?.title ?? d.metric,
      winner,
      // On the runner-up's value (the deltas beside it are on the baseline's).
      margin:
        d.margin === null
          ? ""
          : `${(d.margin * 100).toFixed(1)} % ${meta?.higherIsBetter === false ? "less" : "more"} than the runner-up's`,
      confidence,
    };
  });
}

/** A live run's curves for uPlot: [t, throughput] and [t, loss], and accuracy. */
export function liveCurves(live: LiveRun): { throughput: (number | null)[][]; loss: (number | null)[][]; accuracy: (number | null)[][] } {
  const t = live.points.map((p) => p.t_s);
  return {
    throughput: [t, live.points.map((p) => p.samples_per_s)],
    loss: [t, live.points.map((p) => p.loss)],
    accuracy: [live.evals.map((e) => e.t_s), live.evals.map((e) => e.accuracy)],
  };
}

/** Device (or host) telemetry as [t, memory MiB, util %, power W] per source. */
export function liveTelemetry(live: LiveRun): Map<string, (number | null)[][]> {
  const by = new Map<string, (number | null)[][]>();
  for (const s of live.telemetry) {
    let d = by.get(s.source);
    if (!d) {
      d = [[], [], [], [], []];
      by.set(s.source, d);
    }
    d[0].push(s.t_s);
    d[1].push(s.memory_bytes === null ? null : s.memory_bytes / 1048576);
    d[2].push(s.util_percent);
    d[3].push(s.power_w);
    d[4].push(s.cpu_percent);
  }
  return by;
}

/** Merges an update into the live view it belongs to (lists appended, figures replaced). */
export function applyUpdate(live: LiveRun, u: import("../bindings").LiveUpdate): LiveRun {
  const log = live.log.concat(u.log);
  return {
    ...live,
    phase: u.phase,
    status: u.status,
    reason: u.reason,
    step: u.step,
    total_steps: u.total_steps,
    current_samples_per_s: u.current_samples_per_s,
    steady_samples_per_s: u.steady_samples_per_s,
    points: live.points.concat(u.points),
    evals: live.evals.concat(u.evals),
    // The app thins long runs' series and then sends them whole.
    telemetry: u.telemetry_replace ? u.telemetry : live.telemetry.concat(u.telemetry),
    log: log.length > 400 ? log.slice(log.length - 200) : log,
  };
}

/** The bar metrics in the order a comparison shows them: the one a search
 * decided by first when the runs came from one search, else throughput
 * first. */
export function leadOrder(decidedBy: Metric | null): typeof METRICS {
  const lead = METRICS.find((m) => m.metric === decidedBy);
  return lead ? [lead, ...METRICS.filter((m) => m !== lead)] : METRICS;
}
