// The "Your model" block's state: the library names matching what is typed
// (asked 400 ms after the last key, in the studio's framework environments),
// and a check of one model in each chosen framework — made only when the
// person presses Check, since checking a model file runs its code.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, call, type DescribedModel, errorText, StudioError, type SweepRequest } from "../../api";
import { libraryNames, searchQuery } from "../../lib/ownModel";
import { toRequest, type FieldError, type WizardForm } from "../../lib/sweep";

export interface Found {
  names: string[];
  /** Why some libraries were not asked (an environment not installed). */
  note: string | null;
  searching: boolean;
}

export function useModelSearch(text: string): Found {
  const [found, setFound] = useState<Found>({ names: [], note: null, searching: false });
  useEffect(() => {
    const q = searchQuery(text);
    if (q === null) {
      setFound({ names: [], note: null, searching: false });
      return;
    }
    let stale = false;
    const t = setTimeout(() => {
      setFound((f) => ({ ...f, searching: true }));
      call(api.searchModels(q.needle))
        .then((s) => {
          if (stale) return;
          const names = libraryNames(s).filter((n) => (q.prefix === null || n.startsWith(q.prefix)) && n !== text.trim());
          setFound({ names, note: s.libraries_note, searching: false });
        })
        .catch((e) => !stale && setFound({ names: [], note: errorText(e).message, searching: false }));
    }, 400);
    return () => {
      stale = true;
      clearTimeout(t);
    };
  }, [text]);
  return found;
}

/** What a check found in one framework: the counts, or the error by field. */
export interface Checked {
  framework: string;
  described: DescribedModel | null;
  error: FieldError | null;
}

export function useCheck() {
  const [results, setResults] = useState<Checked[] | null>(null);
  const [checking, setChecking] = useState(false);
  const asked = useRef(0);

  async function one(form: WizardForm, reference: string, framework: string): Promise<Checked> {
    const request = toRequest({ ...form, models: [reference], frameworks: [framework] });
    if (!("model" in request)) return { framework, described: null, error: request };
    try {
      const described = await call(api.describeModel(request as SweepRequest));
      return { framework, described, error: null };
    } catch (e) {
      const field = e instanceof StudioError && e.field ? e.field : "model";
      return { framework, described: null, error: { field, message: errorText(e).message } };
    }
  }

  /** Builds and counts `reference` in each framework of the form, one after another. */
  async function check(form: WizardForm, reference: string | FieldError) {
    const n = ++asked.current;
    if (typeof reference !== "string") {
      setResults([{ framework: "", described: null, error: reference }]);
      return;
    }
    if (form.frameworks.length === 0) {
      setResults([{ framework: "", described: null, error: { field: "framework", message: "framework: choose at least one; the model is built in each framework chosen" } }]);
      return;
    }
    setChecking(true);
    setResults(null);
    const out: Checked[] = [];
    for (const framework of form.frameworks) out.push(await one(form, reference, framework));
    if (n !== asked.current) return;
    setResults(out);
    setChecking(false);
  }

  /** Forgets the last check (the model named changed). */
  function clear() {
    asked.current++;
    setResults(null);
    setChecking(false);
  }

  return { results, checking, check, clear };
}
