import { describe, expect, it } from "vitest";
import { notComparable, regressions } from "../src/regressions";

describe("a version sweep's regressions", () => {
  const warnings = [
    "regression: jax==0.7.2 trains at 0.900× the throughput of the older jax==0.6.2, 95 % CI 0.880–0.920 — slower beyond the interval",
    "run 3: only 2 steady windows",
  ];

  it("are told apart from the other warnings, without their prefix", () => {
    expect(regressions(warnings)).toEqual([
      "jax==0.7.2 trains at 0.900× the throughput of the older jax==0.6.2, 95 % CI 0.880–0.920 — slower beyond the interval",
    ]);
    expect(notComparable(warnings)).toEqual(["run 3: only 2 steady windows"]);
    expect(regressions([])).toEqual([]);
  });
});
