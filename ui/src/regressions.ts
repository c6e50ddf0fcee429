// A version sweep's regressions among a comparison's warnings (the
// comparison says them as warnings that start "regression: ").

const REGRESSION = "regression: ";

/** A version sweep's regressions (a newer release slower beyond the interval), without their prefix. */
export function regressions(warnings: string[]): string[] {
  return warnings.filter((w) => w.startsWith(REGRESSION)).map((w) => w.slice(REGRESSION.length));
}

/** The comparison's other warnings. */
export function notComparable(warnings: string[]): string[] {
  return warnings.filter((w) => !w.startsWith(REGRESSION));
}
