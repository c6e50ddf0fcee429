// Side by side: bars with 95 % intervals, curves over wall time, scaling over
// device count, the table of deltas against a baseline, the decision matrix,
// and warnings where runs are not comparable. Save as a session; export a PDF or HTML report.
import { useEffect, useMemo, useState } from "preact/hooks";
import { api, call, type ChartKind, type CompareView, type Grouping, type SavedSession } from "../api";
import { ErrorBox } from "./common";
import { CompareBody } from "./CompareBody";
import { Explained } from "./Glossary";
import { SaveChart, SaveReport } from "./SaveAs";

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
  const selection = { session_id: null, run_ids: state.runIds, grouping: state.grouping, baseline: state.baseline, settings };

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
        <SaveReport selection={selection} name={state.session?.name ?? "trainbench-comparison"} disabled={!view} onNotice={setNotice} onError={setError} />
        {view && (
          <SaveChart
            selection={selection}
            charts={state.charts}
            name={state.session?.name ?? "trainbench-comparison"}
            onNotice={setNotice}
            onError={setError}
          />
        )}
      </div>
      {notice && <p class="notice" id="compare-notice">{notice}</p>}
      <ErrorBox error={error} onClose={() => setError(null)} />
      {view && <CompareBody view={view} charts={state.charts} runIds={state.runIds} hidden={hidden} toggle={toggle} />}
    </div>
  );
}
