// The comparison itself, under Compare's toolbar: first the picture (the
// deciding metric's bars, the others measured beside it), then warnings,
// the decision matrix, speed-ups, breakdowns, the table against the
// baseline, and the curves.
import { useState } from "preact/hooks";
import type { ChartKind, CompareView } from "../api";
import { BarChart, Legend } from "../charts/BarChart";
import { LineChart } from "../charts/LineChart";
import { alignCurves, bars, chartMarks, compareTable, CURVE_AXES, type CurveAxis, decisionRows, leadOrder, METRICS, scalingLines } from "../lib/shape";
import { notComparable, regressions } from "../regressions";
import { ProfileCompare, StackedBars } from "./Breakdown";
import { Explained } from "./Glossary";
import { CompareRecord } from "./WhatIf";

const BAR_KINDS: Record<string, ChartKind> = {
  throughput: "throughput",
  peak_memory: "peak_memory",
  cost_per_epoch: "cost_per_epoch",
  time_to_accuracy: "time_to_accuracy",
};

/** Releases that got slower, and entries that cannot be compared directly. */
function CompareWarnings({ warnings }: { warnings: string[] }) {
  return (
    <>
      {regressions(warnings).length > 0 && (
        <div class="warnings" id="compare-regressions">
          <h3>Slower in a newer release</h3>
          <ul>
            {regressions(warnings).map((w) => (
              <li key={w}>
                <span class="badge failed">regression</span> {w}
              </li>
            ))}
          </ul>
        </div>
      )}
      {notComparable(warnings).length > 0 && (
        <div class="warnings" id="compare-warnings">
          <h3>Not directly comparable</h3>
          <ul>
            {notComparable(warnings).map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </div>
      )}
    </>
  );
}

/** Each metric's winner, its margin and how sure it is. */
function DecisionMatrix({ view }: { view: CompareView }) {
  const decisions = decisionRows(view);
  return (
    <>
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
    </>
  );
}

/** Each entry's speed-up against the baseline, said settled or not. */
function Speedups({ view }: { view: CompareView }) {
  if ((view.comparison.speedups ?? []).length === 0) return null;
  return (
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
  );
}

/** Every entry's figures, with its interval and its delta against the baseline. */
function BaselineTable({ view }: { view: CompareView }) {
  const table = compareTable(view);
  return (
    <>
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
    </>
  );
}

interface ChartsProps {
  view: CompareView;
  /** The charts chosen. */
  charts: ChartKind[];
  hidden: Set<string>;
  toggle: (k: string) => void;
}

/** The charts chosen: bars, curves against the axis chosen here, scaling. */
function CompareCharts({ view, charts, hidden, toggle }: ChartsProps) {
  const show = (k: ChartKind) => charts.includes(k);
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

/** The picture first: the bars of each metric chosen that has a measured
 * entry, throughput (what decides by default) wide, the others small
 * beside it; a clear winner starred, the baseline a dashed line. */
function LeadCharts({ view, charts, hidden, toggle }: ChartsProps) {
  const drawn = leadOrder(view.decided_by)
    .filter((m) => charts.includes(BAR_KINDS[m.metric]))
    .map((m) => ({ m, b: bars(view, m.metric, hidden) }))
    .filter(({ b }) => b.some((x) => x.value !== null));
  if (drawn.length === 0) return null;
  const [first, ...rest] = drawn;
  const searched = view.decided_by !== null && first.m.metric === view.decided_by;
  const chart = ({ m, b }: (typeof drawn)[number]) => (
    <BarChart key={m.metric} title={m.title} unit={m.unit} bars={b} onToggle={toggle} marks={chartMarks(view, m.metric)} />
  );
  return (
    <div class="lead-charts" id="lead-charts" data-lead={first.m.metric}>
      {searched && <p class="hint" id="lead-why">First: {first.m.title.toLowerCase()}, what the search these runs came from decided by.</p>}
      {chart(first)}
      {rest.length > 0 && <div class="grid2 small-multiples">{rest.map(chart)}</div>}
    </div>
  );
}

export function CompareBody({ view, charts, runIds, hidden, toggle }: ChartsProps & { runIds: number[] }) {
  const show = (k: ChartKind) => charts.includes(k);
  return (
    <>
      {view.comparison.shared_label ? (
        <p class="shared-label" id="shared-label">
          <strong>Every entry:</strong> <code>{view.comparison.shared_label}</code>{" "}
          <span class="hint">— each entry's label says only what sets it apart.</span>
        </p>
      ) : null}
      <LeadCharts view={view} charts={charts} hidden={hidden} toggle={toggle} />
      <CompareWarnings warnings={view.comparison.warnings} />
      <DecisionMatrix view={view} />
      <Speedups view={view} />
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
      <CompareRecord runIds={runIds} />
      <BaselineTable view={view} />
      <CompareCharts view={view} charts={charts} hidden={hidden} toggle={toggle} />
    </>
  );
}
