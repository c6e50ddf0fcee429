// The wizard's model search, as pure functions: the catalogue's rows before
// the backend answers, the size classes in words, and what the list says
// about the models it leaves out.
import type { AppInfo, FoundModel, FoundModels, ModelQuery, SizeClass } from "../api";

/** At most this many rows are listed; the rest are counted. */
export const LISTED = 60;

export const SIZES: [SizeClass, string][] = [
  ["tiny", "under 1 M parameters"],
  ["small", "1 M – 10 M"],
  ["medium", "10 M – 100 M"],
  ["large", "100 M – 1 B"],
  ["huge", "1 B and over"],
];

export const NO_QUERY: ModelQuery = { text: "", family: null, size: null, cpu_only: false, count: false };

/** The catalogue as found models: what the list shows before any answer. */
export function catalogueRows(models: AppInfo["models"]): FoundModel[] {
  return models.map((m) => ({ name: m.name, source: "catalogue", family: m.family, params: m.param_count, cpu: m.cpu_friendly, flops_per_sample: m.flops_per_sample, summary: m.summary }));
}

/** Whether the query narrows anything (an empty one lists the catalogue). */
export function narrows(q: ModelQuery): boolean {
  return q.text.trim() !== "" || q.family !== null || q.size !== null || q.cpu_only;
}

/** Library models are searched from two characters on. */
export function searchesLibraries(q: ModelQuery): boolean {
  return q.text.trim().length >= 2;
}

/** What the list says under its rows: how many more, and the ones without a size. */
export function listNotes(found: FoundModels, q: ModelQuery): string[] {
  const notes: string[] = [];
  if (found.models.length > LISTED) notes.push(`${found.models.length - LISTED} more match: type more of the name or choose a family.`);
  if (found.not_counted > 0) {
    const left = q.size !== null || q.cpu_only ? " and are left out by the size filters" : "";
    notes.push(`${found.not_counted} library models have no size counted yet${left}.`);
  }
  if (!searchesLibraries(q)) notes.push("Type two or more letters to search timm, Hugging Face and Keras models too.");
  return [...notes, ...found.notes];
}

/** A row's size and CPU columns in words. */
export function sizeText(m: FoundModel, count: (n: number) => string): string {
  return m.params === null ? "not counted" : count(m.params);
}

export function cpuText(m: FoundModel): string {
  if (m.cpu === null) return "";
  if (m.source === "catalogue") return m.cpu ? "trains on a CPU" : "needs a GPU";
  return m.cpu ? "small enough for a CPU" : "needs a GPU";
}
