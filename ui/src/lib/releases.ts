// The wizard's version picker: which releases of a framework are chosen
// (sweep keys `jax==0.7.2`), and what each one needs before it can run.
import type { ReleaseChoice, ReleasesMadeDto } from "../bindings";

/** The releases of `framework` among the wizard's chosen framework keys. */
export function chosenReleases(keys: string[], framework: string): string[] {
  return keys.filter((k) => k.startsWith(`${framework}==`));
}

/** Chosen releases whose environment is not made yet, in the list's order. */
export function notInstalled(keys: string[], releases: ReleaseChoice[]): string[] {
  return releases.filter((r) => !r.installed && keys.includes(r.key)).map((r) => r.key);
}

/** What the picker's button says: how many releases are chosen, if any. */
export function pickerLabel(keys: string[], framework: string): string {
  const n = chosenReleases(keys, framework).length;
  return n === 0 ? "Other releases…" : `Other releases… (${n} chosen)`;
}

/** A release's note beside its box. */
export function releaseNote(r: ReleaseChoice): string {
  if (r.studio_own) return "installed (the studio's own)";
  // Not installed says nothing: ticked, it gets an Install button.
  return r.installed ? "installed" : "";
}

/** What Start's installs did to the disk budget, one sentence per release:
 * the ones removed first, then the ones kept over it because a run, a
 * sweep, a bisection or an install uses them. */
export function budgetNotices(made: ReleasesMadeDto): string[] {
  return [...made.removed, ...made.kept].map((r) => r.words);
}
