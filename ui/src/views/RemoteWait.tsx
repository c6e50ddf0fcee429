// A run on a remote host whose end has not been read: where it is, following
// it again, and a way to stop waiting when the host is gone for good.
import { useState } from "preact/hooks";
import type { RemoteRunView } from "../bindings";
import { Confirm } from "./common";

export function RemoteWait({
  runId,
  remote,
  attach,
  abandon,
  onChanged,
  onError,
}: {
  runId: number;
  remote: RemoteRunView;
  attach: (runId: number) => Promise<void>;
  abandon: (runId: number) => Promise<void>;
  onChanged: () => void;
  onError: (e: unknown) => void;
}) {
  const [asking, setAsking] = useState(false);
  if (!remote.waiting) return null;
  if (remote.followed) {
    return <p class="hint remote-wait">Reading this run from host {remote.host} now (see the queue).</p>;
  }
  async function act(what: (runId: number) => Promise<void>) {
    setAsking(false);
    try {
      await what(runId);
      onChanged();
    } catch (e) {
      onError(e);
    }
  }
  return (
    <div class="notice remote-wait">
      <p>
        This run trains on host <strong>{remote.host}</strong> ({remote.url}) and nothing is reading it now. <strong>Follow it again</strong> reads on from where
        reading stopped ({remote.journal_bytes} bytes of its journal are stored) in the queue, like <code>trainbench attach {runId}</code> in a terminal.
      </p>
      <p>
        If the host is gone for good, stop waiting: the run is stored as <em>interrupted</em> with what was read, and can then be deleted. Its folder on the host ({remote.dir}) is left alone.
      </p>
      <button type="button" id="attach-run" onClick={() => act(attach)}>
        Follow it again
      </button>{" "}
      <button type="button" id="abandon-run" onClick={() => setAsking(true)}>
        Stop waiting for the host…
      </button>
      {asking && (
        <Confirm
          text={`Stop waiting for run #${runId} on host ${remote.host}? It is stored as interrupted with what was read so far.`}
          yes="Stop waiting"
          onYes={() => act(abandon)}
          onNo={() => setAsking(false)}
        />
      )}
    </div>
  );
}
