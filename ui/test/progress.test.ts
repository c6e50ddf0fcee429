// The live view's time left.
import { describe, expect, it } from "vitest";
import { etaSeconds, remaining } from "../src/lib/progress";

const p = (t_s: number | null, step: number) => ({ t_s, step, samples_per_s: null, loss: null });

describe("time left", () => {
  it("comes from the pace of the last 20 seconds", () => {
    // 10 steps/s early, 2 steps/s in the last 20 s: the recent pace counts.
    const points = [p(0, 0), p(10, 100), p(20, 120), p(30, 140)];
    expect(etaSeconds(points, 140, 240)).toBeCloseTo(50);
  });

  it("is unknown without a pace or a length, and zero at the end", () => {
    expect(etaSeconds([p(1, 10)], 10, 100)).toBeNull();
    expect(etaSeconds([p(null, 1), p(null, 5)], 5, 100)).toBeNull();
    expect(etaSeconds([p(1, 10), p(2, 10)], 10, 100)).toBeNull();
    expect(etaSeconds([p(1, 10), p(2, 20)], 20, null)).toBeNull();
    expect(etaSeconds([p(1, 10), p(2, 20)], 100, 100)).toBe(0);
  });

  it("reads as a person says it", () => {
    expect(remaining(0.2)).toBe("1 s");
    expect(remaining(42)).toBe("42 s");
    expect(remaining(185)).toBe("3 min");
    expect(remaining(4800)).toBe("1 h 20 min");
    expect(remaining(7200)).toBe("2 h");
  });
});
