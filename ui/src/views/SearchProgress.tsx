// Long tasks told step by step while the window waits: the batch search
// (the wizard's Start with batch size "max": each probe as it starts and
// ends, and Cancel) and a remote host's add or check (each step).
import { useEffect, useState } from "preact/hooks";
import { api, type NarrationStatus } from "../api";
import { CancelButton } from "./common";

/** The task's status, asked every half second while shown. */
export function useNarration<T = NarrationStatus>(ask: () => Promise<T>): T | null {
  const [status, setStatus] = useState<T | null>(null);
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
  if (!status || (!status.running && status.lines.length === 0)) return <p class="hint">Starting the batch search…</p>;
  return (
    <div class="search-progress" id="search-progress" data-running={status.running ? "yes" : "no"}>
      <p>
        <strong>Finding the largest batch that fits</strong> — each probe a short run in a fresh worker.{" "}
        {status.running && <CancelButton id="cancel-search" label="Cancel search" onCancel={() => api.cancelBatchSearch()} />}
      </p>
      <ol>
        {status.lines.map((l, i) => (
          <li key={i}>{l}</li>
        ))}
      </ol>
    </div>
  );
}
