// The model search's state: the query, and the backend's answer to it
// (asked 300 ms after the last change; an answer to an older query is
// dropped). Counting the sizes of the listed library models is a separate
// request the person makes.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, call, errorText, type FoundModels, type ModelQuery } from "../../api";
import { NO_QUERY } from "../../lib/modelSearch";

export function useFindModels() {
  const [query, setQuery] = useState<ModelQuery>(NO_QUERY);
  const [found, setFound] = useState<FoundModels | null>(null);
  const [busy, setBusy] = useState<"searching" | "counting" | null>(null);
  const [error, setError] = useState<string | null>(null);
  const asked = useRef(0);

  async function ask(q: ModelQuery, kind: "searching" | "counting") {
    const id = ++asked.current;
    setBusy(kind);
    try {
      const answer = await call(api.findModels(q));
      if (id !== asked.current) return;
      setFound(answer);
      setError(null);
    } catch (e) {
      if (id === asked.current) setError(errorText(e).message);
    } finally {
      if (id === asked.current) setBusy(null);
    }
  }

  useEffect(() => {
    const t = setTimeout(() => ask(query, "searching"), 300);
    return () => clearTimeout(t);
  }, [query.text, query.family, query.size, query.cpu_only]);

  return {
    query,
    found,
    busy,
    error,
    set: (change: Partial<ModelQuery>) => setQuery((q) => ({ ...q, ...change, count: false })),
    count: () => ask({ ...query, count: true }, "counting"),
  };
}
