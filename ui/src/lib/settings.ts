/** A run's environment variables in words: what the run set, and which of
 * the frameworks' variables its worker saw (set by the run or inherited),
 * as its hello states them. */
export function settingsText(set: Record<string, string> | undefined, seen: unknown): string {
  const pairs = Array.isArray(seen)
    ? seen.filter((p): p is [string, string] => Array.isArray(p) && typeof p[0] === "string" && typeof p[1] === "string")
    : [];
  const setText = Object.entries(set ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
  const seenText = pairs.map(([k, v]) => `${k}=${v}`).join(" ");
  const parts = [
    setText === "" ? "Variables set: none" : `Variables set: ${setText}`,
    `the worker saw: ${seenText === "" ? "no framework variables" : seenText}`,
  ];
  return parts.join(" · ");
}
