// Views that show stored runs follow the queue: each run it finishes is
// stored, so the view reloads when the number of finished entries changes.
import { useEffect, useState } from "preact/hooks";
import { api } from "../api";

/** The number of queue entries finished since the app opened, asked every `everyMs`. */
export function useFinishedCount(everyMs = 2000): number {
  const [finished, setFinished] = useState(0);
  useEffect(() => {
    let alive = true;
    const poll = () =>
      api
        .queueEntries()
        .then((entries) => alive && setFinished(entries.filter((e) => e.phase === "finished").length))
        .catch(() => {});
    poll();
    const t = setInterval(poll, everyMs);
    return () => {
      alive = false;
      clearInterval(t);
    };
  }, [everyMs]);
  return finished;
}
