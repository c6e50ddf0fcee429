// Chart data shaping and the compare table.
import { describe, expect, it } from "vitest";
import type { LiveRun } from "../src/bindings";
import { alignCurves, applyUpdate, barScale, bars, chartMarks, compareTable, decisionRows, liveCurves, liveTelemetry, scalingLines } from "../src/lib/shape";
import { tooltip } from "../src/charts/BarChart";
import { clipLabel } from "../src/lib/format";
import { view } from "./fixtures";

describe("bars", () => {
  it("one bar per entry, with interval, colour and the reason a value is missing", () => {
    const b = bars(view(), "throughput", new Set());
    expect(b.map((x) => [x.key, x.value, x.low, x.high, x.colour])).toEqual([
      ["1", 100, 95, 104, "#0072b2"],
      ["2", 150, 140, 161, "#e69f00"],
    ]);
    const cost = bars(view(), "cost_per_epoch", new Set());
    expect(cost.every((x) => x.value === null && x.note === "no price chosen")).toBe(true);
    expect(tooltip(cost[0], "USD")).toBe("tch resnet_mini fp32: no price chosen");
    expect(tooltip(b[1], "samples/s")).toBe("tch resnet_mini amp-bf16: 150 samples/s, 95 % CI 140 – 161");
  });

  it("scales to the visible bars and their whiskers", () => {
    expect(barScale(bars(view(), "throughput", new Set()))).toBeCloseTo(161 * 1.1);
    expect(barScale(bars(view(), "throughput", new Set(["2"])))).toBeCloseTo(104 * 1.1);
    expect(barScale(bars(view(), "cost_per_epoch", new Set()))).toBe(1);
  });
});

describe("chart marks", () => {
  it("star the winner the comparison decided clearly and line up the baseline, by key", () => {
    const v = view();
    expect(chartMarks(v, "throughput")).toEqual({ best: "2", baseline: "1" });
    // Decided on point values only: no star.
    expect(chartMarks(v, "peak_memory")).toEqual({ best: null, baseline: "1" });
    expect(chartMarks(v, "cost_per_epoch")).toEqual({ best: null, baseline: "1" });
    expect(chartMarks(v, "time_to_loss")).toEqual({ best: null, baseline: "1" });
  });
});

describe("curves", () => {
  it("aligns runs on the union of their times, gaps left empty", () => {
    const { data, series } = alignCurves(view().throughput_curves, view(), new Set());
    expect(data[0]).toEqual([1, 1.5, 2]);
    expect(data[1]).toEqual([90, null, 100]);
    expect(data[2]).toEqual([null, 140, 150]);
    expect(series.map((s) => s.colour)).toEqual(["#0072b2", "#e69f00"]);
  });

  it("lines runs up by step or from their first steady window", () => {
    const bySteps = alignCurves(view().throughput_curves, view(), new Set(), "step");
    expect(bySteps.data).toEqual([[10, 20], [90, 100], [140, 150]]);
    const bySteady = alignCurves(view().throughput_curves, view(), new Set(), "steady");
    // Run 1 turns steady 0.5 s in, run 2 at 1 s: both curves start at 0.5.
    expect(bySteady.data).toEqual([
      [0.5, 1, 1.5],
      [90, null, 100],
      [140, 150, null],
    ]);
  });

  it("leaves a run without a steady window out of the steady view", () => {
    const v = view();
    const curves = [{ ...v.throughput_curves[0], steady_from_s: null }, v.throughput_curves[1]];
    expect(alignCurves(curves, v, new Set(), "steady").series.map((s) => s.runId)).toEqual([2]);
  });

  it("drops hidden series", () => {
    const { data, series } = alignCurves(view().throughput_curves, view(), new Set(["1"]));
    expect(data).toEqual([[1.5, 2], [140, 150]]);
    expect(series).toHaveLength(1);
  });

  it("has no scaling line without entries that differ only in devices", () => {
    expect(scalingLines(view())).toEqual([]);
    const v = view();
    v.comparison.scaling = [{ label: "tch resnet_mini fp32 b64", points: [[1, 0], [2, 1]] }];
    expect(scalingLines(v)[0].points.map((p) => [p.devices, p.value])).toEqual([[1, 100], [2, 150]]);
  });
});

describe("compare table", () => {
  it("shows values, intervals, deltas against the baseline and winners", () => {
    const t = compareTable(view());
    expect(t[0].baseline).toBe(true);
    expect(t[0].cells[0]).toEqual({ text: "100", ci: "95 – 104", delta: "baseline", winner: false });
    expect(t[1].cells[0]).toEqual({ text: "150", ci: "140 – 161", delta: "+50.0 %", winner: true });
    expect(t[1].cells[1].delta).toBe("−21.9 %");
    expect(t[1].cells[2].text).toBe("no price chosen");
    expect(t[1].cells[3].text).toBe("not reached");
  });

  it("states the decision and how sure it is", () => {
    const d = decisionRows(view());
    expect(d[0]).toEqual({ metric: "Throughput", winner: "tch resnet_mini amp-bf16", margin: "50.0 % more than the runner-up's", confidence: "clear (95 % intervals do not overlap)" });
    expect(d[1].confidence).toBe("on point values (no interval)");
    expect(d[2]).toMatchObject({ winner: "—", confidence: "not measured" });
  });
});

describe("live view", () => {
  const base: LiveRun = {
    run_id: 7, label: "x", phase: "training", status: null, reason: null, step: 4, total_steps: 8,
    current_samples_per_s: 10, steady_samples_per_s: null,
    points: [{ t_s: 1, step: 4, samples_per_s: 10, loss: 2 }], evals: [],
    telemetry: [{ t_s: 0.5, source: "host", memory_bytes: 2097152, util_percent: null, power_w: null, cpu_percent: 99 }], log: ["a"],
  };

  it("appends updates and replaces figures", () => {
    const next = applyUpdate(base, {
      run_id: 7, phase: "finished", status: "completed", reason: null, step: 8, total_steps: 8,
      current_samples_per_s: 12, steady_samples_per_s: 11,
      points: [{ t_s: 2, step: 8, samples_per_s: 12, loss: 1.5 }], evals: [{ t_s: 2, step: 8, accuracy: 0.5 }], telemetry: [], telemetry_replace: false, log: ["b"],
    });
    expect(next.points).toHaveLength(2);
    expect(next.status).toBe("completed");
    expect(next.log).toEqual(["a", "b"]);
    expect(liveCurves(next).throughput).toEqual([[1, 2], [10, 12]]);
    expect(liveCurves(next).accuracy).toEqual([[2], [0.5]]);
  });

  it("takes a thinned series whole instead of appending it", () => {
    const thinned = [{ t_s: 0.5, source: "host", memory_bytes: 1048576, util_percent: null, power_w: null, cpu_percent: 50 }];
    const u = { run_id: 7, phase: "training" as const, status: null, reason: null, step: 5, total_steps: 8, current_samples_per_s: 10, steady_samples_per_s: null, points: [], evals: [], log: [] };
    expect(applyUpdate(base, { ...u, telemetry: thinned, telemetry_replace: true }).telemetry).toEqual(thinned);
    expect(applyUpdate(base, { ...u, telemetry: thinned, telemetry_replace: false }).telemetry).toHaveLength(2);
  });

  it("shows CPU memory in MiB when there is no GPU", () => {
    const t = liveTelemetry(base).get("host");
    expect(t?.[1]).toEqual([2]);
    expect(t?.[4]).toEqual([99]);
  });
});

describe("clipLabel", () => {
  it("keeps a label's start, which tells entries apart, and marks the cut", () => {
    expect(clipLabel("#12 pytorch compile=on", 40)).toBe("#12 pytorch compile=on");
    expect(clipLabel("#12 pytorch@kit-pytorch vit_base_patch16_224 amp-bf16", 20)).toBe("#12 pytorch@kit-pyt…");
    expect([...clipLabel("ab×cd×ef", 4)].length).toBe(4);
  });
});

describe("leadOrder", async () => {
  const { leadOrder } = await import("../src/lib/shape");
  it("puts the metric a search decided by first, else throughput", () => {
    expect(leadOrder(null).map((m) => m.metric)[0]).toBe("throughput");
    expect(leadOrder("peak_memory").map((m) => m.metric)).toEqual(["peak_memory", "throughput", "cost_per_epoch", "time_to_accuracy", "time_to_loss"]);
  });
});
