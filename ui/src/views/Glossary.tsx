// The glossary page, and `Explained`: a word with its meaning as a tooltip
// (dotted underline), from the same list the CLI prints and docs/glossary.md holds.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { Term } from "../api";
import { lookupTerm, searchTerms } from "../lib/glossary";

/** `children` (else the term's word) with the meaning of glossary entry `k` on hover. */
export function Explained({ k, children }: { k: string; children?: ComponentChildren }) {
  const t = lookupTerm(k);
  if (!t) return <>{children}</>;
  return (
    <abbr class="term" title={t.meaning} data-term={k}>
      {children ?? t.term}
    </abbr>
  );
}

export function Glossary({ terms }: { terms: Term[] }) {
  const [filter, setFilter] = useState("");
  const shown = searchTerms(terms, filter);
  return (
    <div class="view glossary">
      <h2>Glossary</h2>
      <p class="hint">The words the studio uses. Underlined words elsewhere show the same explanation when you point at them.</p>
      <input type="search" id="glossary-search" placeholder="Find a term (MFU, bf16, warm-up …)" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      <dl class="glossary-list">
        {shown.map((t) => (
          <>
            <dt key={`${t.key}-t`} id={`term-${t.key}`}>
              {t.term}
            </dt>
            <dd key={`${t.key}-d`}>{t.meaning}</dd>
          </>
        ))}
      </dl>
      {shown.length === 0 && <p class="missing">No term holds “{filter}”.</p>}
    </div>
  );
}
