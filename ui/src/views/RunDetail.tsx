// One stored run opened beside the table: its status, summary figures,
// curves, configuration and provenance, a remote run's wait, and the raw CSV.
import { useEffect, useState } from "preact/hooks";
import { api, call, type RunDetail, type RunSummary as Summary, type RunView } from "../api";
import { LineChart } from "../charts/LineChart";
import { bytes, num, rate, seconds, usd } from "../lib/format";
import { settingsText } from "../lib/settings";
import { Badges, BreakdownTable, ProfileTable } from "./Breakdown";
import { ErrorBox } from "./common";
import { RemoteWait } from "./RemoteWait";
import { SaveRunCsv } from "./SaveAs";
import { VsRecord, WhatIf } from "./WhatIf";

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

/** The summary's figures, each said as measured or why it is missing. */
function RunSummary({ d, s }: { d: RunDetail; s: Summary }) {
  return (
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
  );
}

/** Throughput and loss per window, and accuracy where the run was evaluated. */
function RunCharts({ d }: { d: RunDetail }) {
  const t0 = d.windows[0]?.start_ns ?? 0;
  const wt = d.windows.map((w) => (w.end_ns - t0) / 1e9);
  return (
    <>
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
    </>
  );
}

/** What the run was asked to do and where it ran, and its worker's last words. */
function RunProvenance({ d }: { d: RunDetail }) {
  const hello = (d.hello ?? {}) as Record<string, unknown>;
  return (
    <>
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
    </>
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
        <RunSummary d={d} s={s} />
      ) : (
        <p class="missing">No summary: the run did not produce timing windows.</p>
      )}
      <RunCharts d={d} />
      {s && <VsRecord runId={d.id} />}
      {s && <WhatIf runId={d.id} />}
      <RunProvenance d={d} />
    </aside>
  );
}
