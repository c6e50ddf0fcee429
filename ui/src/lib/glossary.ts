// The studio's words explained (the backend's glossary, sent once with the
// app's info): looked up by key for tooltips and listed on the Glossary page.
import type { Term } from "../bindings";

let terms = new Map<string, Term>();

export function setGlossary(list: Term[]) {
  terms = new Map(list.map((t) => [t.key, t]));
}

/** The term under `key`, if the glossary has it. */
export function lookupTerm(key: string): Term | undefined {
  return terms.get(key);
}

/** Terms whose word or meaning holds `text` (case-insensitive), in the glossary's order. */
export function searchTerms(list: Term[], text: string): Term[] {
  const q = text.trim().toLowerCase();
  if (q === "") return list;
  return list.filter((t) => t.term.toLowerCase().includes(q) || t.key.toLowerCase().includes(q) || t.meaning.toLowerCase().includes(q));
}
