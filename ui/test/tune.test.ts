import { describe, expect, it } from "vitest";
import { fateWords, figure, frontierDots, timeLeft, tuneRequest } from "../src/lib/tune";
import type { CandidateView, Point, SweepRequest } from "../src/bindings";

const base = {
  model: ["resnet_mini"],
  framework: ["tch", "pytorch"],
  compile: ["off", "default"],
  precision: ["fp32"],
  batch_size: [16, 32],
  batch_max: false,
  threads: [1, 2],
  steps: 100,
  epochs: null,
  window_steps: 10,
  repeats: 3,
  host: "box",
} as unknown as SweepRequest;

function cand(over: Partial<CandidateView>): CandidateView {
  return {
    configuration: "tch resnet_mini fp32 ×1 b16",
    settings: null,
    fate: "in_play",
    round_reached: 1,
    why: "",
    value: 1234.56,
    ci95: { low: 1200.1, high: 1260.04 },
    rounds: [],
    ...over,
  } as CandidateView;
}

describe("the wizard's search for the fastest setup", () => {
  it("makes each list of the wizard an axis, here, at the search's own probe length", () => {
    const r = tuneRequest(base, "throughput", " 10m ");
    expect(r.axes).toEqual({
      framework: ["tch", "pytorch"],
      compile: ["off", "default"],
      precision: ["fp32"],
      batch_size: [16, 32],
      threads: [1, 2],
      devices: [],
      cudnn_benchmark: [],
    });
    // Several device counts or cuDNN modes in the wizard: axes too.
    const wide = tuneRequest({ ...base, devices: [1, 2], cudnn_benchmark: [true, false] } as SweepRequest, "throughput", "");
    expect(wide.axes.devices).toEqual([1, 2]);
    expect(wide.axes.cudnn_benchmark).toEqual([true, false]);
    expect(tuneRequest({ ...base, devices: [2] } as SweepRequest, "throughput", "").axes.devices).toEqual([2]);
    expect(r.base.host).toBeNull();
    expect(r.base.steps).toBeNull();
    expect(r.base.window_steps).toBeNull();
    expect(r.base.repeats).toBe(1);
    expect(r.budget).toBe("10m");
    expect(r.confirm_repeats).toBe(3);
    expect(r.objective).toBe("throughput");
  });

  it("keeps the steps as the most a run may take when racing to the target, and searches the largest batch when asked", () => {
    const r = tuneRequest({ ...base, batch_max: true, repeats: 1 } as SweepRequest, "time-to-accuracy", "");
    expect(r.base.steps).toBe(100);
    expect(r.base.window_steps).toBe(10);
    expect(r.axes.batch_size).toEqual([]);
    expect(r.base.batch_max).toBe(true);
    expect(r.budget).toBeNull();
    expect(r.confirm_repeats).toBeNull();
  });

  it("says each candidate's state and figure", () => {
    expect(fateWords(cand({}), null)).toBe("still in");
    expect(fateWords(cand({}), "tch resnet_mini fp32 ×1 b16")).toBe("training");
    expect(fateWords(cand({ fate: "stopped_slower" }), null)).toBe("stopped early: settled slower");
    expect(fateWords(cand({ fate: "unsupported" }), null)).toBe("refused before running");
    expect(figure(cand({}))).toBe("1235 (1200–1260)");
    expect(figure(cand({ value: 12.345, ci95: null }))).toBe("12.35");
    expect(figure(cand({ value: null }))).toBe("–");
  });

  it("counts the time left down from the budget", () => {
    expect(timeLeft(130, 900)).toBe("12 min 50 s left of 15 min 0 s");
    expect(timeLeft(950, 900)).toBe("0 s left of 15 min 0 s");
    expect(timeLeft(0.4, 600)).toBe("10 min 0 s left of 10 min 0 s");
  });

  it("places the frontier's points: faster up, larger right, none on an axis", () => {
    const pts: Point[] = [
      { candidate: 0, label: "a", samples_per_s: 200, peak_memory_mib: 100, cost_per_epoch_usd: null },
      { candidate: 1, label: "b", samples_per_s: 100, peak_memory_mib: 50, cost_per_epoch_usd: null },
    ] as Point[];
    const placed = frontierDots(pts, 120, 60);
    expect(placed?.mem).toEqual([45, 105]);
    expect(placed?.rate).toEqual([90, 210]);
    expect(placed?.dots.map((d) => [d.label, Math.round(d.x), Math.round(d.y)])).toEqual([
      ["a", 110, 5],
      ["b", 10, 55],
    ]);
    expect(frontierDots([{ ...pts[0], peak_memory_mib: null }], 100, 50)).toBeNull();
  });
});

describe("span", async () => {
  const { span } = await import("../src/lib/tune");
  it("says seconds, minutes or hours as a person reads them", () => {
    expect(span(42)).toBe("42.0 s");
    expect(span(720)).toBe("12 min");
    expect(span(12240)).toBe("3.4 h");
  });
});
