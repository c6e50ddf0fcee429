// Side by side: bars with 95 % intervals, curves over wall time, scaling over
// device count, the table of deltas against a baseline, the decision matrix,
// and warnings where runs are not comparable. Save as a session; export PDF.
import { useEffect, useMemo, useState } from "preact/hooks";
import { save } from "@tauri-apps/plugin-dialog";
import { api, call, type ChartKind, type CompareView, type Grouping, type SavedSession } from "../api";
import { BarChart, Legend } from "../charts/BarChart";
import { LineChart } from "../charts/LineChart";
import { bytes } from "../lib/format";
import { alignCurves, bars, compareTable, CURVE_AXES, type CurveAxis, decisionRows, METRICS, scalingLines } from "../lib/shape";
import { ProfileCompare, StackedBars } from "./Breakdown";
import { ErrorBox } from "./common";
import { Explained } from "./Glossary";
import { SaveChart } from "./SaveAs";
import { CompareRecord } from "./WhatIf";
import { notComparable, regressions } from "../regressions";

export interface CompareState {
  runIds: number[];
  grouping: Grouping;
  baseline: number | null;
  charts: ChartKind[];
  hidden: string[];
  session: SavedSession | null;
}

interface Props {
  state: CompareState;
  allCharts: ChartKind[];
  onChange: (s: CompareState) => void;
}

const BAR_KINDS: Record<string, ChartKind> = {
  throughput: "throughput",
  peak_memory: "peak_memory",
  cost_per_epoch: "cost_per_epoch",
  time_to_accuracy: "time_to_accuracy",
};

export function Compare({ state, allCharts, onChange }: Props) {
  const [view, setView] = useState<CompareView | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [name, setName] = useState(state.session?.name ?? "");
  const [notice, setNotice] = useState<string | null>(null);
  const hidden = useMemo(() => new Set(state.hidden), [state.hidden]);

  useEffect(() => {
    if (state.runIds.length < 2) {
      setView(null);
      return;
    }
    call(api.compare(state.runIds, state.grouping, state.baseline))
      .then((v) => {
        setView(v);
        setError(null);
      })
      .catch((e) => {
        setView(null);
        setError(e);
      });
  }, [state.runIds.join(","), state.grouping, state.baseline]);

  if (state.runIds.length < 2) {
    return (
      <div class="view compare">
        <h2>Compare</h2>
        <p class="hint">Select two or more runs in “Runs” and press “Compare selected”, or open a saved session.</p>
      </div>
    );
  }

  const toggle = (key: string) => onChange({ ...state, hidden: hidden.has(key) ? state.hidden.filter((k) => k !== key) : [...state.hidden, key] });
  const settings = { grouping: state.grouping, charts: state.charts, hidden_series: state.hidden };

  async function saveSession() {
    try {
      const s = state.session
        ? await call(api.updateSession(state.session.id, state.runIds, state.baseline, settings))
        : await call(api.saveSession(name, state.runIds, state.baseline, settings));
      onChange({ ...state, session: s });
      setNotice(`Saved session “${s.name}”.`);
      setError(null);
    } catch (e) {
      setError(e);
    }
  }

  async function exportPdf() {
    try {
      const path = await save({ title: "Export PDF report", defaultPath: `${state.session?.name ?? "trainbench-comparison"}.pdf`, filters: [{ name: "PDF", extensions: ["pdf"] }] });
      if (!path) return;
      const w = await call(api.exportPdf({ session_id: null, run_ids: state.runIds, grouping: state.grouping, baseline: state.baseline, settings }, path));
      setNotice(`Wrote ${w.path} (${bytes(w.bytes)}).`);
    } catch (e) {
      setError(e);
    }
  }

  const show = (k: ChartKind) => state.charts.includes(k);
  const baselineRun = view ? view.comparison.entries[view.comparison.baseline]?.run_ids[0] ?? null : state.baseline;
  return (
    <div class="view compare">
      <h2>
        Compare {state.session ? `— ${state.session.name}` : ""} <span class="hint">({state.runIds.map((r) => `#${r}`).join(", ")})</span>
      </h2>
      <div class="toolbar">
        <label>
          Group{" "}
          <select value={state.grouping} onChange={(e) => onChange({ ...state, grouping: e.currentTarget.value as Grouping, hidden: [] })}>
            <option value="runs">each run</option>
            <option value="configurations">by configuration (repeats pooled)</option>
          </select>
        </label>
        <label>
          <Explained k="baseline">Baseline</Explained>{" "}
          <select id="baseline" value={String(baselineRun ?? "")} onChange={(e) => onChange({ ...state, baseline: Number(e.currentTarget.value) })}>
            {view?.comparison.entries.map((e) => (
              <option key={e.key} value={String(e.run_ids[0])}>
                {e.label}
              </option>
            ))}
          </select>
        </label>
        <details class="chart-picker">
          <summary>Charts</summary>
          {allCharts.map((k) => (
            <label key={k} class="inline">
              <input type="checkbox" checked={show(k)} onChange={() => onChange({ ...state, charts: show(k) ? state.charts.filter((c) => c !== k) : allCharts.filter((c) => c === k || state.charts.includes(c)) })} />
              {k.replace(/_/g, " ")}
            </label>
          ))}
        </details>
        {!state.session && <input id="session-name" placeholder="Session name" value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        <button type="button" id="save-session" disabled={!state.session && name.trim() === ""} onClick={saveSession}>
          {state.session ? "Save changes" : "Save session"}
        </button>
        <button type="button" onClick={exportPdf} disabled={!view}>
          Export PDF…
        </button>
        {view && (
          <SaveChart
            selection={{ session_id: null, run_ids: state.runIds, grouping: state.grouping, baseline: state.baseline, settings }}
            charts={state.charts}
            name={state.session?.name ?? "trainbench-comparison"}
            onNotice={setNotice}
            onError={setError}
          />
        )}
      </div>
      {notice && <p class="notice" id="compare-notice">{notice}</p>}
      <ErrorBox error={error} onClose={() => setError(null)} />
      {view && <CompareBody view={view} state={state} hidden={hidden} toggle={toggle} />}
    </div>
  );
}

function CompareBody({ view, state, hidden, toggle }: { view: CompareView; state: CompareState; hidden: Set<string>; toggle: (k: string) => void }) {
  const table = compareTable(view);
  const decisions = decisionRows(view);
  const show = (k: ChartKind) => state.charts.includes(k);
  const [axis, setAxis] = useState<CurveAxis>("time");
  const xLabel = CURVE_AXES.find((a) => a.axis === axis)?.label ?? "";
  const curve = (title: string, unit: string, curves: typeof view.throughput_curves) => {
    const { data, series } = alignCurves(curves, view, hidden, axis);
    return (
      <div>
        <LineChart title={title} xLabel={xLabel} yLabel={unit} data={data} series={series.map((s) => ({ label: s.label, colour: s.colour, unit }))} legend={false} />
        <Legend items={view.comparison.entries.map((e, i) => ({ key: e.key, label: e.label, colour: view.colours[i], hidden: hidden.has(e.key) }))} onToggle={toggle} />
      </div>
    );
  };
  const scaling = scalingLines(view);
  return (
    <>
      {view.comparison.shared_label ? (
        <p class="shared-label" id="shared-label">
          <strong>Every entry:</strong> <code>{view.comparison.shared_label}</code>{" "}
          <span class="hint">— each entry's label says only what sets it apart.</span>
        </p>
      ) : null}
      {regressions(view.comparison.warnings).length > 0 && (
        <div class="warnings" id="compare-regressions">
          <h3>Slower in a newer release</h3>
          <ul>
            {regressions(view.comparison.warnings).map((w) => (
              <li key={w}>
                <span class="badge failed">regression</span> {w}
              </li>
            ))}
          </ul>
        </div>
      )}
      {notComparable(view.comparison.warnings).length > 0 && (
        <div class="warnings" id="compare-warnings">
          <h3>Not directly comparable</h3>
          <ul>
            {notComparable(view.comparison.warnings).map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </div>
      )}
      <h3>Decision matrix</h3>
      <table class="decisions" id="decision-matrix">
        <thead>
          <tr>
            <th>Metric</th>
            <th>Winner</th>
            <th>Margin</th>
            <th>
              <Explained k="how-sure">How sure</Explained>
            </th>
          </tr>
        </thead>
        <tbody>
          {decisions.map((d) => (
            <tr key={d.metric}>
              <td>{d.metric}</td>
              <td>{d.winner}</td>
              <td>{d.margin}</td>
              <td>{d.confidence}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {(view.comparison.speedups ?? []).length > 0 && (
        <>
          <h3>Speed-up against the baseline</h3>
          <ul class="speedups" id="speedups">
            {(view.comparison.speedups ?? []).map((s) => (
              <li key={s.entry} class={s.settled ? "settled" : "unsettled"} title={s.method}>
                {s.verdict}
              </li>
            ))}
          </ul>
        </>
      )}
      {show("step_breakdown") && (
        <StackedBars
          entries={view.comparison.entries.map((e) => ({ label: e.label, breakdown: e.breakdown }))}
          explanations={view.comparison.explanations ?? []}
        />
      )}
      <ProfileCompare
        entries={view.comparison.entries.map((e) => ({ label: e.label, profile: e.profile }))}
        gaps={view.comparison.profile_gaps ?? []}
      />
      <CompareRecord runIds={state.runIds} />
      <h3>Against the baseline</h3>
      <table class="compare-table" id="compare-table">
        <thead>
          <tr>
            <th>Configuration</th>
            <th>Runs</th>
            {METRICS.map((m) => (
              <th key={m.metric}>
                {m.title} ({m.unit}) {m.higherIsBetter ? "↑" : "↓"}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {table.map((r) => (
            <tr key={r.key} class={r.baseline ? "baseline" : ""}>
              <td>{r.label}</td>
              <td>{r.runs}</td>
              {r.cells.map((c, i) => (
                <td key={i} class={c.winner ? "num winner" : "num"}>
                  {c.text}
                  {c.ci && <div class="ci">95 % CI {c.ci}</div>}
                  {c.delta && <div class="delta">{c.delta}</div>}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <p class="curve-axis">
        <label>
          Curves against{" "}
          <select id="curve-axis" value={axis} onChange={(e) => setAxis(e.currentTarget.value as CurveAxis)}>
            {CURVE_AXES.map((a) => (
              <option key={a.axis} value={a.axis}>
                {a.label}
              </option>
            ))}
          </select>
        </label>{" "}
        <span class="hint">— from the first steady window, runs whose compilation or warm-up took longer line up.</span>
      </p>
      <div class="grid2">
        {METRICS.filter((m) => show(BAR_KINDS[m.metric])).map((m) => (
          <BarChart key={m.metric} title={m.title} unit={m.unit} bars={bars(view, m.metric, hidden)} onToggle={toggle} />
        ))}
        {show("throughput_over_time") && curve("Throughput over time", "samples/s", view.throughput_curves)}
        {show("loss_over_time") && curve("Loss over time", "loss", view.loss_curves)}
        {show("accuracy_over_time") &&
          (view.accuracy_curves.some((c) => c.points.some(([, y]) => y !== null)) ? (
            curve("Accuracy over time", "accuracy", view.accuracy_curves)
          ) : (
            <figure class="chart">
              <figcaption>Accuracy over time</figcaption>
              <p class="missing" id="no-accuracy">
                No run here was evaluated: accuracy is measured on a held-out split of real data (MNIST, CIFAR-10, an image folder, text), which synthetic data does not have.
              </p>
            </figure>
          ))}
        {show("scaling") && scaling.length > 0 && (
          <div>
            {scaling.map((s) => (
              <LineChart
                key={s.label}
                title={`Scaling: ${s.label}`}
                xLabel="devices"
                yLabel="samples/s"
                data={[s.points.map((p) => p.devices), s.points.map((p) => p.value)]}
                series={[{ label: "throughput", colour: "#0072b2", unit: "samples/s", points: true }]}
              />
            ))}
          </div>
        )}
      </div>
    </>
  );
}
