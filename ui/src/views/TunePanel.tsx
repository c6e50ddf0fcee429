// Find the fastest setup: the wizard's lists (frameworks, compile modes,
// precisions, batch sizes, threads) searched by successive halving. Every
// candidate gets a short probe; one whose interval lies wholly below the
// leader's is stopped; survivors run longer; the winner is confirmed
// against the runner-up with repeats. Live: the candidates' table, the time
// left and Cancel; then the winner, its command and TOML file, the frontier.
import { useState } from "preact/hooks";
import { api, call, type CandidateView, type SweepRequest, type TunedView } from "../api";
import { fateWords, figure, frontierDots, OBJECTIVES, timeLeft, tuneRequest } from "../lib/tune";
import { TuneOutlook } from "./TuneOutlook";
import { CancelButton, ErrorBox } from "./common";
import { useNarration } from "./SearchProgress";

function Candidates({ rows, unit, training }: { rows: CandidateView[]; unit: string; training: string | null }) {
  return (
    <table class="tune-candidates" id="tune-candidates">
      <thead>
        <tr>
          <th>Configuration</th>
          <th>State</th>
          <th class="num">Round</th>
          <th class="num">Latest ({unit}, 95 % interval)</th>
          <th>Why</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((c) => (
          <tr key={c.configuration} data-fate={c.fate}>
            <td>{c.configuration}</td>
            <td>{fateWords(c, training)}</td>
            <td class="num">{c.round_reached ?? "–"}</td>
            <td class="num">{figure(c)}</td>
            <td>{c.why}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Live() {
  const status = useNarration(api.tuneStatus);
  if (!status) return <p class="hint">Planning the search…</p>;
  return (
    <div class="search-progress" id="tune-progress" data-running={status.running ? "yes" : "no"}>
      <p>
        <strong>Searching</strong>
        {status.budget_s !== null && status.budget_s > 0 && <> — {timeLeft(status.elapsed_s ?? 0, status.budget_s)}</>}{" "}
        <CancelButton id="cancel-tune" onCancel={() => api.cancelTune()} />
      </p>
      {status.candidates.length > 0 && <Candidates rows={status.candidates} unit={status.unit ?? ""} training={status.training} />}
      <ol>{status.lines.slice(-8).map((l, i) => <li key={i}>{l}</li>)}</ol>
    </div>
  );
}

/** Throughput against peak memory: the candidates no other beats on both,
 * numbered on the chart and listed below it. */
function Frontier({ found }: { found: TunedView }) {
  const w = 360;
  const h = 160;
  const placed = frontierDots(found.frontier.memory, w, h);
  if (!placed) return null;
  return (
    <figure class="tune-frontier" id="tune-frontier">
      <svg viewBox={`-60 -16 ${w + 90} ${h + 52}`} width={w + 90} height={h + 52} role="img" aria-label="throughput against peak memory">
        <line x1={0} y1={h} x2={w} y2={h} class="axis" />
        <line x1={0} y1={0} x2={0} y2={h} class="axis" />
        {placed.dots.map((d, i) => (
          <g key={d.label}>
            <circle cx={d.x} cy={d.y} r={4}>
              <title>{d.label}</title>
            </circle>
            <text x={d.x + 7} y={d.y + 4}>
              {i + 1}
            </text>
          </g>
        ))}
        <text x={0} y={h + 16}>
          {placed.mem[0].toFixed(0)} MiB
        </text>
        <text x={w} y={h + 16} text-anchor="end">
          {placed.mem[1].toFixed(0)} MiB
        </text>
        <text x={w / 2} y={h + 32} text-anchor="middle">
          peak memory →
        </text>
        <text x={-6} y={h} text-anchor="end">
          {placed.rate[0].toFixed(0)}
        </text>
        <text x={-6} y={8} text-anchor="end">
          {placed.rate[1].toFixed(0)}
        </text>
        <text x={4} y={-4}>
          ↑ samples/s
        </text>
      </svg>
      <ol>
        {placed.dots.map((d) => (
          <li key={d.label}>
            {d.label}: {d.rate.toFixed(0)} samples/s, {d.mem.toFixed(0)} MiB
          </li>
        ))}
      </ol>
      <figcaption>The frontier: no other candidate is both faster and smaller.</figcaption>
    </figure>
  );
}

function Found({ found }: { found: TunedView }) {
  return (
    <div class="tune-found" id="tune-found" data-ended={found.ended}>
      <p>
        <strong id="tune-verdict">{found.verdict}</strong>
      </p>
      {found.winner?.command && (
        <>
          <p>{found.tie ? "Either will do; the command that reproduces the first:" : "The command that reproduces the winner:"}</p>
          <pre id="tune-command">{found.winner.command}</pre>
          <details>
            <summary>As a TOML file (trainbench run --config FILE)</summary>
            <pre>{found.winner.toml}</pre>
          </details>
        </>
      )}
      <Candidates rows={found.candidates} unit={found.unit} training={null} />
      <Frontier found={found} />
      <TuneOutlook outlook={found.outlook} />
      <p class="hint">
        Stored as sweep {found.sweep_id} ({found.run_ids.length} runs, {Math.round(found.elapsed_s ?? 0)} s): select them in Runs to compare; their PDF report has
        a Search section.
      </p>
    </div>
  );
}

export function TunePanel({ base }: { base: SweepRequest | null }) {
  const [objective, setObjective] = useState("throughput");
  const [budget, setBudget] = useState("15m");
  const [running, setRunning] = useState(false);
  const [found, setFound] = useState<TunedView | null>(null);
  const [error, setError] = useState<unknown>(null);

  async function start() {
    if (!base) return;
    setRunning(true);
    setError(null);
    setFound(null);
    try {
      setFound(await call(api.startTune(tuneRequest(base, objective, budget))));
    } catch (e) {
      setError(e);
    } finally {
      setRunning(false);
    }
  }

  return (
    <details class="tune" id="tune">
      <summary>Find the fastest setup (a search over the lists above)</summary>
      <p class="hint">
        Every combination of the frameworks, compile modes, precisions, batch sizes and thread counts above (and of the device counts and cuDNN modes, when several are listed) is a candidate. Each first gets a short probe
        (40 steps); a candidate whose 95 % interval lies wholly below the leader's is stopped, the others run longer, and the winner is confirmed against the
        runner-up with repeats. Failed or out-of-memory candidates are recorded and the search goes on. No run starts once the budget is spent.
      </p>
      <div class="row">
        <label>
          Objective{" "}
          <select name="tune_objective" value={objective} onChange={(e) => setObjective(e.currentTarget.value)} disabled={running}>
            {OBJECTIVES.map(([v, t]) => (
              <option key={v} value={v}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <label>
          Budget{" "}
          <input name="tune_budget" value={budget} onInput={(e) => setBudget(e.currentTarget.value)} disabled={running} placeholder="15m, 90s, 1h30m" />
        </label>
      </div>
      <button type="button" id="start-tune" disabled={running || !base} onClick={start}>
        {running ? "Searching…" : "Find the fastest setup"}
      </button>
      {!base && <p class="hint warn">Fix the settings above first: the search trains them.</p>}
      {running && <Live />}
      <ErrorBox error={error} onClose={() => setError(null)} />
      {found && <Found found={found} />}
    </details>
  );
}
