// Long tasks told step by step while the window waits: the batch search
// (the wizard's Start with batch size "max": each probe as it starts and
// ends, and Cancel) and a remote host's add or check (each step).
import { useEffect, useState } from "preact/hooks";
import { api, type NarrationStatus } from "../api";

/** The task's status, asked every half second while shown. */
export function useNarration(ask: () => Promise<NarrationStatus>): NarrationStatus | null {
  const [status, setStatus] = useState<NarrationStatus | null>(null);
  useEffect(() => {
    let alive = true;
    const poll = () =>
      ask()
        .then((s) => alive && setStatus(s))
        .catch(() => {});
    poll();
    const t = setInterval(poll, 500);
    return () => {
      alive = false;
      clearInterval(t);
    };
  }, []);
  return status;
}

/** A host being added or checked: its steps so far. */
export function HostSteps() {
  const status = useNarration(api.hostSteps);
  if (!status?.running || status.lines.length === 0) return <p class="hint">Connecting…</p>;
  return (
    <ol class="host-steps" id="host-steps">
      {status.lines.map((l, i) => (
        <li key={i} class={i === status.lines.length - 1 ? "current" : ""}>
          {l}
        </li>
      ))}
    </ol>
  );
}

export function SearchProgress() {
  const status = useNarration(api.batchSearchStatus);
  const [cancelling, setCancelling] = useState(false);
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
