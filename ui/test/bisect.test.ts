import { describe, expect, it } from "vitest";
import { bisectRequest, defaultBounds, interval, oldestFirst, placement } from "../src/lib/bisect";
import type { BisectedDto, ReleaseChoice, SweepRequest } from "../src/bindings";

const releases: ReleaseChoice[] = ["0.8.0", "0.7.0", "0.6.2", "0.6.1"].map((v) => ({ key: `jax==${v}`, version: v, installed: false, studio_own: false }));

const found: BisectedDto = {
  sweep_id: 1,
  run_ids: [1, 2],
  verdict: "the metric first changed in 0.7.0",
  first_changed: "0.7.0",
  last_same: "0.6.2",
  unit: "samples/s",
  evidence: [
    { release: "0.6.1", runs: 3, mean: 147.2, low: 105.39, high: 189.06 },
    { release: "0.6.2", runs: 3, mean: 166.5, low: 134.6, high: 198.4 },
    { release: "0.7.0", runs: 3, mean: 23.6, low: 11.8, high: 35.3 },
    { release: "0.8.0", runs: 3, mean: 26.1, low: null, high: null },
  ],
};

describe("the wizard's bisection", () => {
  it("bounds default to the oldest and newest release listed", () => {
    expect(defaultBounds(releases)).toEqual({ good: "0.6.1", bad: "0.8.0" });
    expect(defaultBounds([])).toEqual({ good: "", bad: "" });
    expect(oldestFirst(releases)).toEqual(["0.6.1", "0.6.2", "0.7.0", "0.8.0"]);
  });

  it("trains the wizard's settings at each release, here", () => {
    const base = { model: ["vit_mini_patch4_32"], framework: ["tch", "jax"], repeats: 5, host: "box" } as unknown as SweepRequest;
    const r = bisectRequest(base, "jax", "0.6.1", "0.8.0", "throughput", 3);
    expect(r.base.framework).toEqual(["jax"]);
    expect(r.base.repeats).toBe(1);
    expect(r.base.host).toBeNull();
    expect(r.base.model).toEqual(["vit_mini_patch4_32"]);
    expect([r.min_repeats, r.max_repeats]).toEqual([3, 9]);
    expect(bisectRequest(base, "jax", "a", "b", "throughput", 12).max_repeats).toBe(12);
  });

  it("places each measured release and shows its interval", () => {
    expect(found.evidence.map((e) => placement(found, e))).toEqual(["like the good one", "last like the good one", "first changed", "like the bad one"]);
    expect(interval(found.evidence[0])).toBe("105.39 – 189.06");
    expect(interval(found.evidence[3])).toBe("–");
    expect(placement({ ...found, first_changed: null, last_same: null }, found.evidence[0])).toBe("measured");
  });
});
