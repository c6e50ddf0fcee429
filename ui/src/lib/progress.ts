// How long a running benchmark has left, from its own pace: the steps of its
// last PACE_S seconds. An estimate, and said so where it is shown.
import type { LivePoint, QueueEntry } from "../bindings";

/** The window the pace is measured over, seconds. */
export const PACE_S = 20;

/** Seconds left to the run's last step at its recent pace; null until two
 * timed points with different steps exist, or when the length is unknown. */
export function etaSeconds(points: LivePoint[], step: number, totalSteps: number | null): number | null {
  if (totalSteps === null || totalSteps <= 0) return null;
  if (step >= totalSteps) return 0;
  const timed = points.filter((p) => p.t_s !== null) as (LivePoint & { t_s: number })[];
  if (timed.length < 2) return null;
  const last = timed[timed.length - 1];
  const first = timed.find((p) => p.t_s >= last.t_s - PACE_S) ?? timed[0];
  const dt = last.t_s - first.t_s;
  const ds = last.step - first.step;
  if (dt <= 0 || ds <= 0) return null;
  return ((totalSteps - step) * dt) / ds;
}

/** A remaining time as a person says it: "40 s", "3 min", "1 h 20 min". */
export function remaining(s: number): string {
  if (s < 60) return `${Math.max(1, Math.round(s))} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  const h = Math.floor(s / 3600);
  const m = Math.round((s - h * 3600) / 60);
  return m > 0 ? `${h} h ${m} min` : `${h} h`;
}

/** How many runs are left: the one training and those waiting. */
export function leftWords(entries: Pick<QueueEntry, "phase">[]): string {
  const waiting = entries.filter((e) => e.phase === "queued").length;
  const running = entries.filter((e) => e.phase === "starting" || e.phase === "training").length;
  const left = waiting + running;
  if (left === 0) return "Nothing left to run.";
  const parts = [running > 0 ? "1 running" : null, waiting > 0 ? `${waiting} waiting` : null].filter(Boolean);
  return `${left} ${left === 1 ? "run" : "runs"} left: ${parts.join(", ")}.`;
}
