// The step breakdown drawn as stacked bars (one bar per entry, one segment
// per part, per sample) and the validity badges' look. Pure, tested.
import type { CheckStatus, Part, StepBreakdown, ValidityCheck } from "../bindings";

export const PART_ORDER: Part[] = ["data", "forward", "backward", "communication", "optimizer", "step"];

export const PART_NAMES: Record<Part, string> = {
  data: "data",
  forward: "forward",
  backward: "backward",
  communication: "communication",
  optimizer: "optimizer",
  step: "fused step",
};

export const PART_COLOURS: Record<Part, string> = {
  data: "#8c6d31",
  forward: "#3182bd",
  backward: "#e6550d",
  communication: "#756bb1",
  optimizer: "#31a354",
  step: "#636363",
};

export interface Segment {
  part: Part;
  /** Start and width as fractions of the longest bar. */
  x: number;
  width: number;
  perSampleS: number;
  share: number;
}

export interface StackedBar {
  label: string;
  /** Seconds per sample, all parts; null when not measured. */
  total: number | null;
  segments: Segment[];
}

/** One bar per entry, scaled so the longest bar is 1. */
export function stackedBars(entries: { label: string; breakdown?: StepBreakdown | null }[]): StackedBar[] {
  const totals = entries.map((e) =>
    e.breakdown ? e.breakdown.parts.reduce((sum, p) => sum + (p.per_sample_s ?? 0), 0) : null,
  );
  const longest = Math.max(0, ...totals.map((t) => t ?? 0));
  return entries.map((e, i) => {
    const segments: Segment[] = [];
    let x = 0;
    const parts = [...(e.breakdown?.parts ?? [])].sort(
      (a, b) => PART_ORDER.indexOf(a.part) - PART_ORDER.indexOf(b.part),
    );
    for (const p of parts) {
      const v = Math.max(0, p.per_sample_s ?? 0);
      const width = longest > 0 ? v / longest : 0;
      segments.push({ part: p.part, x, width, perSampleS: v, share: p.share ?? 0 });
      x += width;
    }
    return { label: e.label, total: totals[i], segments };
  });
}

/** The parts present in any bar, in the drawing order (for the legend). */
export function partsPresent(bars: StackedBar[]): Part[] {
  return PART_ORDER.filter((p) => bars.some((b) => b.segments.some((s) => s.part === p)));
}

export const STATUS_MARK: Record<CheckStatus, string> = {
  pass: "✓",
  fail: "✗",
  not_measured: "?",
  not_applicable: "–",
};

/** Failing badges first, then passing, then the rest, keeping their order. */
export function badgeOrder(checks: ValidityCheck[]): ValidityCheck[] {
  const rank: Record<CheckStatus, number> = { fail: 0, pass: 1, not_measured: 2, not_applicable: 3 };
  return checks
    .map((c, i) => ({ c, i }))
    .sort((a, b) => rank[a.c.status] - rank[b.c.status] || a.i - b.i)
    .map((x) => x.c);
}
