// The queue and the live view of one run: progress, throughput now and
// steady, loss and accuracy curves, device (or CPU) memory, utilisation and
// power, the log tail, and Cancel. Progress arrives through a channel per run.
import { useEffect, useMemo, useState } from "preact/hooks";
import { Channel } from "@tauri-apps/api/core";
import { api, call, type LiveRun, type LiveUpdate, type QueueEntry } from "../api";
import { LineChart } from "../charts/LineChart";
import { rate } from "../lib/format";
import { etaSeconds, leftWords, PACE_S, remaining } from "../lib/progress";
import { applyUpdate, liveCurves, liveTelemetry } from "../lib/shape";
import { ErrorBox } from "./common";
import { StartNotices } from "./StartNotices";
import { Explained } from "./Glossary";

interface Props {
  /** Sentences about what Start did besides queueing (releases removed over
   * the disk budget, or kept over it because they are in use), shown above
   * the queue. */
  notices: string[];
  selected: number | null;
  onSelect: (id: number) => void;
  onOpenRun: (id: number) => void;
}

export function Queue({ notices, selected, onSelect, onOpenRun }: Props) {
  const [entries, setEntries] = useState<QueueEntry[]>([]);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    let alive = true;
    const poll = () =>
      api
        .queueEntries()
        .then((e) => alive && setEntries(e))
        .catch((e) => alive && setError(e));
    poll();
    const t = setInterval(poll, 1000);
    return () => {
      alive = false;
      clearInterval(t);
    };
  }, []);

  const current = selected ?? entries.find((e) => e.phase !== "finished")?.run_id ?? entries[0]?.run_id ?? null;

  return (
    <div class="view queue">
      <aside>
        <h2>Queue</h2>
        {entries.length > 0 && (
          <p class="hint" id="queue-left">
            {leftWords(entries)}
          </p>
        )}
        <ErrorBox error={error} />
        <StartNotices notices={notices} />
        {entries.length === 0 && <p class="hint">Nothing queued since the app opened. Start a benchmark from “Welcome” or “New benchmark”.</p>}
        <ol class="queue-list">
          {entries.map((e) => (
            <li key={e.run_id} class={e.run_id === current ? "selected" : ""} data-run={e.run_id} data-phase={e.phase} data-status={e.status ?? ""}>
              <button type="button" class="link" onClick={() => onSelect(e.run_id)}>
                #{e.run_id} {e.label}
              </button>
              <span class={`badge ${e.status ?? e.phase}`}>{e.status ?? e.phase}</span>
            </li>
          ))}
        </ol>
      </aside>
      {current !== null && <LiveView key={current} runId={current} onOpenRun={onOpenRun} />}
    </div>
  );
}

interface LiveProps {
  runId: number;
  onOpenRun: (id: number) => void;
  /** Called once when the run has finished, with its stored status. */
  onFinished?: (status: string) => void;
}

/** The estimate of time left, said to be one; before training, what it waits for. */
function TimeLeft({ live }: { live: LiveRun }) {
  if (live.phase !== "training") {
    return (
      <p class="hint" id="time-left">
        {live.phase === "queued" ? "Waiting for the runs before it to finish." : "Starting the worker and building the model — the clock for throughput starts with training."}
      </p>
    );
  }
  const eta = etaSeconds(live.points, live.step, live.total_steps);
  return (
    <p class="hint" id="time-left" title={`Estimated from the steps of the last ${PACE_S} s; evaluations and a target reached early change it.`}>
      {eta === null ? "Measuring the pace…" : `About ${remaining(eta)} left at the current pace.`}
    </p>
  );
}

interface HeaderProps {
  live: LiveRun;
  finished: boolean;
  onCancel: () => void;
  onOpenRun: (id: number) => void;
}

/** The run, its status, and Cancel (or, once it has finished, its stored detail). */
function LiveHeader({ live, finished, onCancel, onOpenRun }: HeaderProps) {
  return (
    <header>
      <h2>
        #{live.run_id} {live.label}
      </h2>
      <span class={`badge ${live.status ?? live.phase}`} id="live-status">
        {live.status ?? live.phase}
      </span>
      {!finished && (
        <button type="button" class="danger" id="cancel-run" onClick={onCancel}>
          Cancel
        </button>
      )}
      {finished && (
        <button type="button" onClick={() => onOpenRun(live.run_id)}>
          Open detail
        </button>
      )}
    </header>
  );
}

interface ChartsProps {
  live: LiveRun;
  curves: ReturnType<typeof liveCurves>;
  telemetry: ReturnType<typeof liveTelemetry>;
  finished: boolean;
}

/** Throughput and loss, accuracy (or why there is none yet), and each telemetry source. */
function LiveCharts({ live, curves, telemetry, finished }: ChartsProps) {
  return (
    <div class="grid2">
      <LineChart
        title="Throughput and loss"
        xLabel="s since start"
        yLabel="samples/s"
        y2Label="loss"
        data={[curves.throughput[0], curves.throughput[1], curves.loss[1]]}
        series={[
          { label: "throughput", colour: "#0072b2", unit: "samples/s" },
          { label: "loss", colour: "#d55e00", right: true },
        ]}
      />
      {live.evals.length > 0 ? (
        <LineChart
          title="Accuracy (held-out)"
          xLabel="s since start"
          yLabel="accuracy"
          data={curves.accuracy}
          series={[{ label: "accuracy", colour: "#009e73", points: true }]}
        />
      ) : (
        <figure class="chart">
          <figcaption>Accuracy (held-out)</figcaption>
          <p class="missing">No evaluation yet{finished ? " — this run had none (accuracy is measured on a held-out split of real data, which synthetic data does not have)" : ""}.</p>
        </figure>
      )}
      {[...telemetry.entries()].map(([source, d]) => (
        <LineChart
          key={source}
          title={source === "host" ? "Worker memory (RSS) and CPU — no GPU telemetry" : `${source}: memory, utilisation, power`}
          xLabel="s since start"
          yLabel="MiB"
          y2Label={source === "host" ? "CPU %" : "% / W"}
          data={source === "host" ? [d[0], d[1], d[4]] : [d[0], d[1], d[2], d[3]]}
          series={
            source === "host"
              ? [
                  { label: "RSS", colour: "#0072b2", unit: "MiB" },
                  { label: "CPU", colour: "#e69f00", unit: "%", right: true },
                ]
              : [
                  { label: "memory", colour: "#0072b2", unit: "MiB" },
                  { label: "utilisation", colour: "#e69f00", unit: "%", right: true },
                  { label: "power", colour: "#cc79a7", unit: "W", right: true },
                ]
          }
        />
      ))}
    </div>
  );
}

export function LiveView({ runId, onOpenRun, onFinished }: LiveProps) {
  const [live, setLive] = useState<LiveRun | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [gone, setGone] = useState(false);

  useEffect(() => {
    const ch = new Channel<LiveUpdate>();
    let snapshot: LiveRun | null = null;
    const pending: LiveUpdate[] = [];
    ch.onmessage = (u) => {
      if (snapshot === null) {
        pending.push(u);
        return;
      }
      snapshot = applyUpdate(snapshot, u);
      setLive(snapshot);
    };
    api
      .watchRun(runId, ch)
      .then((l) => {
        if (l === null) {
          setGone(true);
          return;
        }
        snapshot = l;
        // Updates that raced the snapshot repeat what it holds; only their figures matter.
        for (const u of pending) snapshot = { ...applyUpdate(snapshot, { ...u, points: [], evals: [], telemetry: [], telemetry_replace: false, log: [] }) };
        setLive(snapshot);
      })
      .catch(setError);
    return () => {
      ch.onmessage = () => {};
    };
  }, [runId]);

  const curves = useMemo(() => (live ? liveCurves(live) : null), [live]);
  const status = live?.phase === "finished" ? (live.status ?? "finished") : null;
  useEffect(() => {
    if (status !== null) onFinished?.(status);
  }, [status]);
  const telemetry = useMemo(() => (live ? liveTelemetry(live) : null), [live]);

  if (gone) {
    return (
      <section class="live">
        <p>
          Run #{runId} is not in the queue, which holds the runs started since the app opened.{" "}
          <button type="button" class="link" onClick={() => onOpenRun(runId)}>
            Open its stored detail
          </button>
        </p>
      </section>
    );
  }
  if (!live || !curves || !telemetry) return <section class="live">{error ? <ErrorBox error={error} /> : <p>Loading…</p>}</section>;

  const total = live.total_steps ?? 0;
  const pct = total > 0 ? Math.min(100, (100 * live.step) / total) : 0;
  const finished = live.phase === "finished";
  return (
    <section class="live" data-run={live.run_id} data-phase={live.phase} data-status={live.status ?? ""}>
      <LiveHeader live={live} finished={finished} onCancel={() => call(api.cancelRun(live.run_id)).catch(setError)} onOpenRun={onOpenRun} />
      <ErrorBox error={error} />
      {live.reason && <p class={live.status === "completed" ? "hint" : "error"}>{live.reason}</p>}
      <div class="progress" role="progressbar" aria-valuemin={0} aria-valuemax={total} aria-valuenow={live.step}>
        <div style={{ width: `${pct}%` }} />
        <span>
          step {live.step}
          {total > 0 ? ` of ${total}` : ""}
        </span>
      </div>
      {!finished && <TimeLeft live={live} />}
      <dl class="figures">
        <dt>Throughput now</dt>
        <dd id="tp-now">{rate(live.current_samples_per_s)}</dd>
        <dt>
          <Explained k="steady">Steady</Explained> (median after <Explained k="warm-up">warm-up</Explained>)
        </dt>
        <dd id="tp-steady">{rate(live.steady_samples_per_s)}</dd>
      </dl>
      <LiveCharts live={live} curves={curves} telemetry={telemetry} finished={finished} />
      <h3>Log</h3>
      <pre class="log" id="live-log">{live.log.slice(-200).join("\n")}</pre>
    </section>
  );
}
