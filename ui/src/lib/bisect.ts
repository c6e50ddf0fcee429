// The wizard's bisection: its request from the wizard's settings, the
// default bounds, and what each measured release's row says.
import type { BisectedDto, BisectRequest, EvidenceDto, ReleaseChoice, SweepRequest } from "../bindings";

/** The oldest and the newest release listed (the list comes newest first). */
export function defaultBounds(releases: ReleaseChoice[]): { good: string; bad: string } {
  if (releases.length === 0) return { good: "", bad: "" };
  return { good: releases[releases.length - 1].version, bad: releases[0].version };
}

/** The releases from oldest to newest, for the bound pickers. */
export function oldestFirst(releases: ReleaseChoice[]): string[] {
  return [...releases].reverse().map((r) => r.version);
}

/** The request: the wizard's settings trained at each release of `framework`. */
export function bisectRequest(base: SweepRequest, framework: string, good: string, bad: string, metric: string, fewest: number): BisectRequest {
  return {
    framework,
    good,
    bad,
    metric,
    min_repeats: fewest,
    max_repeats: Math.max(9, fewest),
    base: { ...base, framework: [framework], repeats: 1, host: null },
  };
}

/** Where a measured release was placed. */
export function placement(found: BisectedDto, e: EvidenceDto): string {
  if (found.first_changed === null) return "measured";
  if (e.release === found.first_changed) return "first changed";
  if (e.release === found.last_same) return "last like the good one";
  const changed = found.evidence.findIndex((x) => x.release === found.first_changed);
  const here = found.evidence.indexOf(e);
  return here > changed ? "like the bad one" : "like the good one";
}

/** `105.39 – 189.06`, or a dash without an interval. */
export function interval(e: EvidenceDto): string {
  return e.low === null || e.high === null ? "–" : `${e.low.toFixed(2)} – ${e.high.toFixed(2)}`;
}
