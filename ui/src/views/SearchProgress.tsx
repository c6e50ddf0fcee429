// The batch search while it runs (the wizard's Start with batch size "max"):
// each probe as it starts and ends, and Cancel.
import { useEffect, useState } from "preact/hooks";
import { api, type SearchStatus } from "../api";

export function SearchProgress() {
  const [status, setStatus] = useState<SearchStatus | null>(null);
  const [cancelling, setCancelling] = useState(false);
  useEffect(() => {
    let alive = true;
    const poll = () =>
      api
        .batchSearchStatus()
        .then((s) => alive && setStatus(s))
        .catch(() => {});
    poll();
    const t = setInterval(poll, 500);
    return () => {
      alive = false;
      clearInterval(t);
    };
  }, []);
  if (!status || (!status.running && status.lines.length === 0)) return <p class="hint">Starting the batch search…</p>;
  return (
    <div class="search-progress" id="search-progress" data-running={status.running ? "yes" : "no"}>
      <p>
        <strong>Finding the largest batch that fits</strong> — each probe a short run in a fresh worker.{" "}
        {status.running && (
          <button
            type="button"
            class="small danger"
            id="cancel-search"
            disabled={cancelling}
            onClick={() => {
              setCancelling(true);
              api.cancelBatchSearch().catch(() => {});
            }}
          >
            {cancelling ? "Cancelling…" : "Cancel search"}
          </button>
        )}
      </p>
      <ol>
        {status.lines.map((l, i) => (
          <li key={i}>{l}</li>
        ))}
      </ol>
    </div>
  );
}
