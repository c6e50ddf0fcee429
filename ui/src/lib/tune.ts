// The wizard's "Find the fastest setup": its request from the wizard's
// settings (each list an axis of the search), and how a candidate's state
// and figures read in the table.
import type { CandidateView, Point, SweepRequest, TuneRequest } from "../bindings";

export const OBJECTIVES: [string, string][] = [
  ["throughput", "Fastest (samples/s)"],
  ["memory", "Least peak memory"],
  ["cost", "Cheapest per epoch (needs a price)"],
  ["time-to-accuracy", "Soonest to the target accuracy"],
  ["energy", "Fewest joules per sample (on a GPU)"],
];

/** The search over the wizard's lists: frameworks, compile modes,
 * precisions, batch sizes (or the largest that fits, and its halves),
 * thread counts, device counts and cuDNN's benchmark modes. Probes take the search's own length (40 steps in windows
 * of 4) unless the objective is time to accuracy, where the wizard's steps
 * are the most a run may take. */
export function tuneRequest(base: SweepRequest, objective: string, budget: string): TuneRequest {
  const toAccuracy = objective === "time-to-accuracy";
  return {
    base: {
      ...base,
      host: null,
      steps: toAccuracy ? base.steps : null,
      epochs: null,
      window_steps: toAccuracy ? base.window_steps : null,
      repeats: 1,
    },
    axes: {
      framework: base.framework,
      compile: base.compile,
      precision: base.precision,
      batch_size: base.batch_max ? [] : base.batch_size,
      threads: base.threads ?? [],
      // One value is every candidate's; several, an axis of the search.
      devices: base.devices ?? [],
      cudnn_benchmark: base.cudnn_benchmark ?? [],
    },
    objective,
    budget: budget.trim() === "" ? null : budget.trim(),
    confirm_repeats: base.repeats >= 2 ? base.repeats : null,
  };
}

/** A candidate's state in words. */
export function fateWords(c: CandidateView, training: string | null): string {
  if (training !== null && c.configuration === training) return "training";
  switch (c.fate) {
    case "winner":
      return "winner";
    case "runner_up":
      return "runner-up";
    case "in_play":
      return "still in";
    case "stopped_slower":
      return "stopped early: settled slower";
    case "stopped_lower_half":
      return "stopped early: lower half";
    case "failed":
      return "failed";
    case "unsupported":
      return "refused before running";
  }
}

/** `1234.5 (1200.1–1260.0)`, or a dash when nothing was measured. */
export function figure(c: CandidateView): string {
  if (c.value === null) return "–";
  const digits = Math.abs(c.value) >= 100 ? 0 : Math.abs(c.value) >= 1 ? 2 : 4;
  const v = c.value.toFixed(digits);
  const low = c.ci95?.low ?? null;
  const high = c.ci95?.high ?? null;
  if (low === null || high === null) return v;
  return `${v} (${low.toFixed(digits)}–${high.toFixed(digits)})`;
}

/** "4 min 10 s left of 15 min 0 s", from the status's seconds. */
export function timeLeft(elapsed_s: number, budget_s: number): string {
  const words = (s: number) => {
    const whole = Math.round(s);
    const m = Math.floor(whole / 60);
    return m > 0 ? `${m} min ${whole - m * 60} s` : `${whole} s`;
  };
  return `${words(Math.max(0, budget_s - elapsed_s))} left of ${words(budget_s)}`;
}

/** A frontier point with both figures, placed in a `w`×`h` box (throughput
 * up, memory right, a margin so that no point sits on an axis). */
export type Dot = { x: number; y: number; label: string; mem: number; rate: number };

/** The frontier's points placed, with the ranges the axes span; null when
 * no point has both figures. */
export function frontierDots(points: Point[], w: number, h: number): { dots: Dot[]; mem: [number, number]; rate: [number, number] } | null {
  const measured = points.flatMap((p) =>
    p.peak_memory_mib === null || p.samples_per_s === null ? [] : [{ mem: p.peak_memory_mib, rate: p.samples_per_s, label: p.label }],
  );
  if (measured.length === 0) return null;
  const span = (xs: number[]): [number, number] => {
    const lo = Math.min(...xs);
    const hi = Math.max(...xs);
    const pad = hi > lo ? (hi - lo) * 0.1 : Math.max(Math.abs(lo) * 0.1, 1);
    return [lo - pad, hi + pad];
  };
  const mem = span(measured.map((p) => p.mem));
  const rate = span(measured.map((p) => p.rate));
  const dots = measured.map((p) => ({
    ...p,
    x: ((p.mem - mem[0]) / (mem[1] - mem[0])) * w,
    y: h - ((p.rate - rate[0]) / (rate[1] - rate[0])) * h,
  }));
  return { dots, mem, rate };
}

/** Seconds in words read at a glance: `42.0 s`, `12 min`, `3.4 h`. */
export function span(s: number): string {
  if (s < 120) return `${s.toFixed(1)} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
