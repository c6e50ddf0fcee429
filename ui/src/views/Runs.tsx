// Every stored run: search, filter, sort; select to compare, export or
// delete (asks first); open one for its detail.
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { save } from "@tauri-apps/plugin-dialog";
import { api, call, type LeftOutRun, type RunListItem, type RunView } from "../api";
import { LineChart } from "../charts/LineChart";
import { bytes, date, num, rate, seconds, usd } from "../lib/format";
import { typing, useKeydown } from "../lib/keys";
import { useFinishedCount } from "../lib/queueWatch";
import { defaultQuery, queryRuns, type SortKey, type TableQuery } from "../lib/table";
import { Confirm, ErrorBox } from "./common";
import { Badges, BreakdownTable, ProfileTable } from "./Breakdown";
import { RemoteWait } from "./RemoteWait";
import { ColumnPicker, OptionalCell, optionalTitle, useColumns } from "./RunColumns";
import { SaveRunCsv } from "./SaveAs";
import { VsRecord, WhatIf } from "./WhatIf";
import { settingsText } from "../lib/settings";

const PAGE = 300;

interface Props {
  openRun: number | null;
  onOpenRun: (id: number | null) => void;
  onCompare: (ids: number[]) => void;
  /** Opens the welcome view (the quick benchmark) or the wizard. */
  onStart: (where: "welcome" | "wizard") => void;
}

/** What an empty database offers instead of an empty table. */
function NoRuns({ onStart }: { onStart: Props["onStart"] }) {
  return (
    <div class="empty-state" id="runs-empty">
      <p>
        <strong>No runs stored yet.</strong> Every benchmark you run is stored here, with its figures, its curves and how it was measured.
      </p>
      <p>
        <button type="button" class="primary" onClick={() => onStart("welcome")}>
          Run the quick benchmark
        </button>{" "}
        <button type="button" onClick={() => onStart("wizard")}>
          Set up a benchmark
        </button>
      </p>
      <p class="hint">Runs from another machine come in through Sessions → Import.</p>
    </div>
  );
}

/** One line per stored run left out because its row is damaged: the run,
 * the column, the value and what is allowed there. */
function LeftOut({ runs }: { runs: LeftOutRun[] }) {
  if (runs.length === 0) return null;
  return (
    <ul class="warnings" id="runs-left-out">
      {runs.map((l) => (
        <li key={l.run} data-run={l.run} data-column={l.column}>
          {l.message}
        </li>
      ))}
    </ul>
  );
}

export function Runs({ openRun, onOpenRun, onCompare, onStart }: Props) {
  const [rows, setRows] = useState<RunListItem[] | null>(null);
  // Runs whose stored row is damaged: named with the column, never hidden.
  const [leftOut, setLeftOut] = useState<LeftOutRun[]>([]);
  const [query, setQuery] = useState<TableQuery>(defaultQuery);
  const [picked, setPicked] = useState<Set<number>>(new Set());
  const [error, setError] = useState<unknown>(null);
  const [asking, setAsking] = useState(false);
  const [shown, setShown] = useState(PAGE);
  const [notice, setNotice] = useState<string | null>(null);

  const load = () =>
    call(api.listRuns())
      .then((r) => {
        setRows(r.runs);
        setLeftOut(r.left_out);
      })
      .catch(setError);
  // Loaded on opening and again each time the queue finishes a run.
  const finished = useFinishedCount();
  useEffect(() => {
    load();
  }, [finished]);

  const visible = useMemo(() => (rows ? queryRuns(rows, query) : []), [rows, query]);
  const frameworks = useMemo(() => Array.from(new Set((rows ?? []).map((r) => r.framework))).sort(), [rows]);
  const statuses = useMemo(() => Array.from(new Set((rows ?? []).map((r) => r.status))).sort(), [rows]);

  const [columns, setColumns] = useColumns();
  const sortBy = (k: SortKey) => setQuery((q) => ({ ...q, sort: k, descending: q.sort === k ? !q.descending : true }));
  const th = (k: SortKey, text: ComponentChildren) => (
    <th key={k}>
      <button type="button" class="link" onClick={() => sortBy(k)}>
        {text}
        {query.sort === k ? (query.descending ? " ▼" : " ▲") : ""}
      </button>
    </th>
  );
  const toggle = (id: number) =>
    setPicked((p) => {
      const n = new Set(p);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });

  // Delete (outside a field) asks to delete the selected runs.
  useKeydown((e) => {
    if (e.key === "Delete" && !typing(e.target) && picked.size > 0 && !asking) {
      e.preventDefault();
      setAsking(true);
    }
  });

  async function remove() {
    setAsking(false);
    try {
      const n = await call(api.deleteRuns([...picked]));
      setNotice(`Deleted ${n} run(s).`);
      setPicked(new Set());
      if (openRun !== null && picked.has(openRun)) onOpenRun(null);
      await load();
    } catch (e) {
      setError(e);
    }
  }

  async function exportCsv() {
    try {
      const path = await save({ title: "Export runs as CSV", defaultPath: "trainbench-runs.csv", filters: [{ name: "CSV", extensions: ["csv"] }] });
      if (!path) return;
      const w = await call(api.exportCsv([...picked], path));
      setNotice(`Wrote ${w.path} (${bytes(w.bytes)}).`);
    } catch (e) {
      setError(e);
    }
  }

  return (
    <div class="view runs">
      <h2>Runs</h2>
      <ErrorBox error={error} onClose={() => setError(null)} />
      {notice && <p class="notice">{notice}</p>}
      <div class="toolbar">
        <input type="search" id="run-search" placeholder="Search runs (model, framework, #id …)  /" value={query.search} onInput={(e) => setQuery({ ...query, search: e.currentTarget.value })} />
        <select aria-label="Status" value={query.status} onChange={(e) => setQuery({ ...query, status: e.currentTarget.value })}>
          <option value="">any status</option>
          {statuses.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
        <select aria-label="Framework" value={query.framework} onChange={(e) => setQuery({ ...query, framework: e.currentTarget.value })}>
          <option value="">any framework</option>
          {frameworks.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
        <span class="hint">
          {visible.length} of {rows?.length ?? 0} runs · {picked.size} selected
        </span>
        <button type="button" id="compare-selected" disabled={picked.size < 2} onClick={() => onCompare([...picked].sort((a, b) => a - b))}>
          Compare selected
        </button>
        <button type="button" disabled={rows === null || rows.length === 0} onClick={exportCsv}>
          Export CSV{picked.size > 0 ? " (selected)" : " (all)"}
        </button>
        <button type="button" class="danger" disabled={picked.size === 0} onClick={() => setAsking(true)}>
          Delete…
        </button>
        <ColumnPicker chosen={columns} onChange={setColumns} />
      </div>
      {asking && (
        <Confirm
          text={`Delete ${picked.size} run(s) and everything stored about them? This cannot be undone.`}
          yes="Delete"
          onYes={remove}
          onNo={() => setAsking(false)}
        />
      )}
      <LeftOut runs={leftOut} />
      {rows !== null && rows.length === 0 && leftOut.length === 0 && <NoRuns onStart={onStart} />}
      <div class="split">
        <div class="table-wrap" hidden={rows !== null && rows.length === 0}>
          <table class="runs-table">
            <thead>
              <tr>
                <th />
                {th("id", "#")}
                {th("status", "Status")}
                {th("label", "Configuration")}
                {th("throughput", "Throughput (samples/s)")}
                {th("peak_memory_bytes", "Peak memory")}
                {th("time_to_accuracy_s", "Time to accuracy")}
                {th("cost_per_epoch_usd", "Cost / epoch")}
                {columns.map((c) => th(c, optionalTitle(c)))}
                {th("created_unix_ms", "Created")}
              </tr>
            </thead>
            <tbody>
              {visible.slice(0, shown).map((r) => (
                <tr key={r.id} data-run={r.id} class={r.id === openRun ? "selected" : ""}>
                  <td>
                    <input type="checkbox" aria-label={`Select run ${r.id}`} checked={picked.has(r.id)} onChange={() => toggle(r.id)} />
                  </td>
                  <td>
                    <button type="button" class="link" onClick={() => onOpenRun(r.id)}>
                      #{r.id}
                    </button>
                  </td>
                  <td>
                    <span class={`badge ${r.status}`} title={r.status_reason ?? ""}>
                      {r.status}
                    </span>
                  </td>
                  <td>
                    {r.label}
                    {r.imported_from && <span class="hint"> (imported from {r.imported_from})</span>}
                  </td>
                  <td class="num">
                    {r.throughput === null ? <span class="missing">not measured</span> : num(r.throughput, 4)}
                    {r.throughput_low !== null && r.throughput_high !== null && <span class="ci"> [{num(r.throughput_low, 3)}–{num(r.throughput_high, 3)}]</span>}
                  </td>
                  <td class="num">{bytes(r.peak_memory_bytes)}</td>
                  <td class="num">
                    {r.target_accuracy === null ? <span class="missing">no target</span> : r.target_reached === false ? "not reached" : seconds(r.time_to_accuracy_s)}
                  </td>
                  <td class="num">
                    {r.price_offering === null ? (
                      <span class="missing">no price</span>
                    ) : (
                      <>
                        {usd(r.cost_per_epoch_usd)}
                        {r.cost_is_projected && (
                          <span class="hint" title="for an epoch the run did not train through: the epoch size at the measured throughput">
                            {" "}
                            projected
                          </span>
                        )}
                      </>
                    )}
                  </td>
                  {columns.map((c) => (
                    <OptionalCell key={c} column={c} r={r} />
                  ))}
                  <td>{date(r.created_unix_ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {visible.length > shown && (
            <button type="button" onClick={() => setShown(shown + PAGE)}>
              Show {Math.min(PAGE, visible.length - shown)} more
            </button>
          )}
        </div>
        {openRun !== null && <RunDetailPanel key={openRun} runId={openRun} onClose={() => onOpenRun(null)} />}
      </div>
    </div>
  );
}

function Provenance({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <p class="missing">not recorded</p>;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== null && typeof v !== "object");
  return (
    <dl class="kv">
      {entries.map(([k, v]) => (
        <>
          <dt>{k}</dt>
          <dd>{String(v)}</dd>
        </>
      ))}
    </dl>
  );
}

export function RunDetailPanel({ runId, onClose }: { runId: number; onClose: () => void }) {
  const [view, setView] = useState<RunView | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<{ notice: string | null; error: unknown }>({ notice: null, error: null });
  const load = () => call(api.runDetail(runId)).then(setView).catch(setError);
  useEffect(() => {
    load();
  }, [runId]);
  if (error) return <aside class="detail"><ErrorBox error={error} /></aside>;
  if (!view) return <aside class="detail">Loading…</aside>;
  const d = view.detail;
  const s = d.summary;
  const t0 = d.windows[0]?.start_ns ?? 0;
  const wt = d.windows.map((w) => (w.end_ns - t0) / 1e9);
  const hello = (d.hello ?? {}) as Record<string, unknown>;
  return (
    <aside class="detail" data-run={d.id}>
      <header>
        <h3>
          Run #{d.id}: {view.label}
        </h3>
        <button type="button" class="link" onClick={onClose} aria-label="Close">
          ×
        </button>
      </header>
      <p>
        <span class={`badge ${d.status}`}>{d.status}</span> {d.status_reason}
        {d.origin && <span class="hint"> — imported from {d.origin.hostname} (run #{d.origin.source_run_id} there)</span>}
      </p>
      <SaveRunCsv runId={d.id} onNotice={(notice) => setSaved({ notice, error: null })} onError={(e) => setSaved({ notice: null, error: e })} />
      {saved.notice && <p class="notice">{saved.notice}</p>}
      <ErrorBox error={saved.error} onClose={() => setSaved({ notice: null, error: null })} />
      {view.remote && (
        <RemoteWait
          runId={d.id}
          remote={view.remote}
          attach={async (id) => {
            await call(api.attachRun(id));
          }}
          abandon={async (id) => {
            await call(api.abandonRun(id));
          }}
          onChanged={load}
          onError={setError}
        />
      )}
      {d.error_class && (
        <div class="error">
          <strong>{d.error_class}</strong> {d.status_reason}
        </div>
      )}
      <h4>Summary</h4>
      {s ? (
        <dl class="kv">
          <dt>Steady throughput</dt>
          <dd>
            {rate(s.throughput_samples_per_s)}
            {s.throughput_ci95 ? ` (95 % CI ${num(s.throughput_ci95.low, 4)} – ${num(s.throughput_ci95.high, 4)})` : " (no interval: fewer than 6 steady windows)"}
          </dd>
          {s.tokens_per_s != null && (
            <>
              <dt>Tokens/s</dt>
              <dd>
                {num(s.tokens_per_s, 4)}
                {s.tokens_per_s_ci95 ? ` (95 % CI ${num(s.tokens_per_s_ci95.low, 4)} – ${num(s.tokens_per_s_ci95.high, 4)})` : ""} — {s.tokens_per_sample} tokens per
                sequence, every position trained on
              </dd>
            </>
          )}
          <dt>Windows</dt>
          <dd>
            {s.windows_total} ({s.windows_warmup} warm-up: {s.warmup_rule})
          </dd>
          <dt>Telemetry</dt>
          <dd>
            {d.telemetry_samples} samples stored
            {d.telemetry_raw_samples != null
              ? ` (averaged from ${d.telemetry_raw_samples} at the end of the run, to at most 20,000 per source: the summary used every sample; curves and exports use the averages)`
              : ""}
          </dd>
          <dt>Time to first step</dt>
          <dd>{seconds(s.time_to_first_step_s)}</dd>
          <dt>Peak memory</dt>
          <dd>
            {bytes(s.peak_memory_bytes)} {s.peak_memory_source ? `(${s.peak_memory_source}${s.peak_memory_device ? `, ${s.peak_memory_device}` : ""})` : ""}
          </dd>
          {s.target_loss != null ? (
            <>
              <dt>Time to loss</dt>
              <dd>{s.target_reached === false ? `not reached (best ${num(s.best_loss)})` : `${seconds(s.time_to_loss_s)} to a held-out loss ≤ ${s.target_loss}`}</dd>
            </>
          ) : (
            <>
              <dt>Time to accuracy</dt>
              <dd>{s.target_accuracy === null ? "no target set" : s.target_reached === false ? `not reached (best ${num(s.best_accuracy)})` : `${seconds(s.time_to_accuracy_s)} to ${s.target_accuracy}`}</dd>
            </>
          )}
          <dt>Epoch time</dt>
          <dd>
            {seconds(s.epoch_time_s)} {s.epoch_basis ? `(${s.epoch_basis})` : ""}
          </dd>
          <dt>Cost per epoch</dt>
          <dd>
            {s.cost_per_epoch_usd === null ? (s.price_offering ? "not measured" : "no price chosen") : `${usd(s.cost_per_epoch_usd)}${s.cost_is_projected ? " (projected)" : ""} — ${s.price_offering}, price as of ${s.price_as_of}`}
          </dd>
          <dt>MFU</dt>
          <dd>{s.mfu === null ? s.mfu_note : `${(s.mfu * 100).toFixed(1)} % (${s.mfu_note})`}</dd>
          <dt>Energy per sample</dt>
          <dd>{s.energy_j_per_sample === null ? s.energy_note || "not measured" : `${num(s.energy_j_per_sample, 4)} J (${s.energy_note})`}</dd>
          {s.gpu && (
            <>
              <dt>GPU (steady windows)</dt>
              <dd>
                {s.gpu.mean_power_w === null ? "power not measured" : `${num(s.gpu.mean_power_w, 3)} W`},{" "}
                {s.gpu.mean_util_percent === null ? "utilisation not measured" : `${num(s.gpu.mean_util_percent, 3)} % utilisation`}, {s.gpu.samples} NVML samples of {s.gpu.sources.join(", ")}
              </dd>
            </>
          )}
          {d.loss_scale !== null && (
            <>
              <dt>Loss scale at the end</dt>
              <dd>{d.loss_scale}</dd>
            </>
          )}
          {(s.warnings ?? []).length > 0 && (
            <>
              <dt>Warnings</dt>
              <dd class="warning">
                {(s.warnings ?? []).map((w) => (
                  <div key={w.code}>{w.message}</div>
                ))}
              </dd>
            </>
          )}
          <dt>Parameters</dt>
          <dd>{s.param_count ?? "not measured"}</dd>
          <dt>Validity</dt>
          <dd>
            <Badges checks={s.checks ?? []} />
          </dd>
          <dt>Step breakdown</dt>
          <dd>
            <BreakdownTable b={s.breakdown} />
          </dd>
          <dt>Operator profile</dt>
          <dd>
            <ProfileTable p={d.profile} />
          </dd>
        </dl>
      ) : (
        <p class="missing">No summary: the run did not produce timing windows.</p>
      )}
      {d.windows.length > 0 && (
        <LineChart
          title="Throughput and loss per window"
          xLabel="s since the first window"
          yLabel="samples/s"
          y2Label="loss"
          data={[wt, d.windows.map((w) => w.samples / Math.max(1e-9, (w.end_ns - w.start_ns) / 1e9)), d.windows.map((w) => w.loss_mean)]}
          series={[
            { label: "throughput", colour: "#0072b2", unit: "samples/s" },
            { label: "loss", colour: "#d55e00", right: true },
          ]}
        />
      )}
      {d.evals.length > 0 && (
        <LineChart
          title="Accuracy"
          xLabel="s since training started"
          yLabel="accuracy"
          data={[d.evals.map((e) => e.elapsed_s), d.evals.map((e) => e.accuracy)]}
          series={[{ label: "accuracy", colour: "#009e73", points: true }]}
        />
      )}
      {s && <VsRecord runId={d.id} />}
      {s && <WhatIf runId={d.id} />}
      <h4>Configuration</h4>
      <pre class="json">{JSON.stringify(d.spec, null, 2)}</pre>
      <h4>Provenance</h4>
      <p class="hint">
        {String(hello.framework ?? d.framework)} {String(hello.framework_version ?? "")} · {String(hello.precision_in_effect ?? d.precision)} · {String(hello.execution ?? "")}
      </p>
      <p class="hint" data-testid="settings-env">{settingsText(d.env, hello.settings_env)}</p>
      <Provenance value={d.provenance} />
      {d.stderr_tail && (
        <>
          <h4>Worker stderr (tail)</h4>
          <pre class="log">{d.stderr_tail}</pre>
        </>
      )}
    </aside>
  );
}
