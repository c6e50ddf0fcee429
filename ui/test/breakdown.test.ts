import { describe, expect, it } from "vitest";
import type { StepBreakdown, ValidityCheck } from "../src/bindings";
import { badgeOrder, partsPresent, stackedBars } from "../src/lib/breakdown";

function b(parts: [StepBreakdown["parts"][number]["part"], number][]): StepBreakdown {
  const total = parts.reduce((s, p) => s + p[1], 0);
  return {
    steps: 4,
    parts: parts.map(([part, v]) => ({ part, mean_s: v * 8, ci95: null, per_sample_s: v, share: v / total })),
    parts_sum_s: total * 8,
    whole_step_s: total * 8,
    whole_step_ci95: null,
    split_difference: 0,
    tolerance: 0.1,
    agrees: true,
    steady_step_s: null,
    global_batch: 8,
    fused: null,
    communication: null,
    communication_share: null,
    method: "",
  };
}

describe("stacked bars", () => {
  it("scales to the longest bar, keeps the part order and marks what was not measured", () => {
    const bars = stackedBars([
      { label: "torch", breakdown: b([["optimizer", 1], ["data", 1], ["forward", 2], ["backward", 4]]) },
      { label: "jax", breakdown: b([["data", 1], ["step", 3]]) },
      { label: "old run", breakdown: null },
    ]);
    expect(bars[0].total).toBe(8);
    expect(bars[0].segments.map((s) => s.part)).toEqual(["data", "forward", "backward", "optimizer"]);
    expect(bars[0].segments.map((s) => s.x)).toEqual([0, 0.125, 0.375, 0.875]);
    expect(bars[0].segments[2].width).toBe(0.5);
    expect(bars[1].segments[1]).toMatchObject({ part: "step", x: 0.125, width: 0.375 });
    expect(bars[2]).toEqual({ label: "old run", total: null, segments: [] });
    expect(partsPresent(bars)).toEqual(["data", "forward", "backward", "optimizer", "step"]);
  });
});

describe("badges", () => {
  it("puts failing checks first and keeps the order otherwise", () => {
    const c = (kind: ValidityCheck["kind"], status: ValidityCheck["status"]): ValidityCheck => ({
      kind,
      status,
      evidence: "",
    });
    const order = badgeOrder([
      c("finite_loss", "pass"),
      c("window_spread", "not_measured"),
      c("gpu_throttle", "not_applicable"),
      c("input_bound", "fail"),
      c("recompiles", "pass"),
    ]).map((x) => x.kind);
    expect(order).toEqual(["input_bound", "finite_loss", "recompiles", "window_spread", "gpu_throttle"]);
  });
});
