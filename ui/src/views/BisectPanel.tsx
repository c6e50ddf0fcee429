// Find the release that changed a metric: the wizard's settings trained at
// releases of one framework chosen by binary search between a good (older)
// and a bad (newer) release, each installed when first needed; every step
// told as it goes, with Cancel; what was found with each release's runs,
// mean and interval. Stored as a sweep (Export PDF of its runs shows it).
import { useEffect, useState } from "preact/hooks";
import { api, call, type BisectedDto, type ReleasesDto, type SweepRequest } from "../api";
import { bisectRequest, defaultBounds, interval, oldestFirst, placement } from "../lib/bisect";
import { CancelButton, ErrorBox } from "./common";
import { useNarration } from "./SearchProgress";

const FRAMEWORKS = ["jax", "pytorch", "tensorflow"];
const METRICS: [string, string][] = [
  ["throughput", "Throughput"],
  ["peak_memory", "Peak memory"],
  ["time_to_accuracy", "Time to accuracy"],
  ["time_to_loss", "Time to loss"],
];

/** A labelled choice: `options` as [value, text]. */
function Pick(p: { label: string; name: string; value: string; options: [string, string][]; onChange: (v: string) => void; disabled: boolean }) {
  return (
    <label>
      {p.label}{" "}
      <select name={p.name} value={p.value} onChange={(e) => p.onChange(e.currentTarget.value)} disabled={p.disabled}>
        {p.options.map(([v, t]) => (
          <option key={v} value={v}>
            {t}
          </option>
        ))}
      </select>
    </label>
  );
}

function BisectProgress({ framework }: { framework: string }) {
  const status = useNarration(api.bisectStatus);
  return (
    <div class="search-progress" id="bisect-progress">
      <p>
        <strong>Bisecting</strong> — each step installs a release if needed, then trains it a few times.{" "}
        <CancelButton id="cancel-bisect" onCancel={() => api.cancelBisect(framework)} />
      </p>
      <ol>{(status?.lines ?? []).slice(-12).map((l, i) => <li key={i}>{l}</li>)}</ol>
    </div>
  );
}

function Found({ found }: { found: BisectedDto }) {
  return (
    <div class="bisect-found" id="bisect-found">
      <p>
        <strong>{found.verdict}</strong>
      </p>
      <table>
        <thead>
          <tr>
            <th>Release</th>
            <th class="num">Runs</th>
            <th class="num">Mean ({found.unit})</th>
            <th class="num">95 % interval</th>
            <th>Placed</th>
          </tr>
        </thead>
        <tbody>
          {found.evidence.map((e) => (
            <tr key={e.release} class={e.release === found.first_changed ? "first-changed" : ""}>
              <td>{e.release}</td>
              <td class="num">{e.runs}</td>
              <td class="num">{e.mean === null ? "–" : e.mean.toFixed(2)}</td>
              <td class="num">{interval(e)}</td>
              <td>{placement(found, e)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="hint">
        Stored as sweep {found.sweep_id} (runs {found.run_ids[0]}–{found.run_ids[found.run_ids.length - 1]}): select them in Runs to compare; their PDF
        report has a Bisection section.
      </p>
    </div>
  );
}

export function BisectPanel({ base }: { base: SweepRequest | null }) {
  const [open, setOpen] = useState(false);
  const [framework, setFramework] = useState("jax");
  const [list, setList] = useState<ReleasesDto | null>(null);
  const [bounds, setBounds] = useState({ good: "", bad: "" });
  const [metric, setMetric] = useState("throughput");
  const [fewest, setFewest] = useState(3);
  const [running, setRunning] = useState(false);
  const [found, setFound] = useState<BisectedDto | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    if (!open) return;
    setList(null);
    call(api.frameworkReleases(framework))
      .then((l) => {
        setList(l);
        setBounds(defaultBounds(l.releases));
      })
      .catch(setError);
  }, [open, framework]);

  async function start() {
    if (!base) return;
    setRunning(true);
    setError(null);
    setFound(null);
    try {
      setFound(await call(api.startBisect(bisectRequest(base, framework, bounds.good, bounds.bad, metric, fewest))));
    } catch (e) {
      setError(e);
    } finally {
      setRunning(false);
    }
  }

  const versions = list ? oldestFirst(list.releases) : [];
  return (
    <details class="bisect" id="bisect" open={open} onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>Find the release that changed a metric (bisection)</summary>
      <p class="hint">
        Trains the settings above (one model, precision and batch size) at releases of one framework, chosen by binary search between a good (older) and a
        bad (newer) release: the two ends first, then the release in the middle, placed with the side whose 95 % interval holds it, until two neighbouring
        releases differ. A release whose runs spread too widely to place gets more runs.
      </p>
      <div class="row">
        <Pick label="Framework" name="bisect_framework" value={framework} options={FRAMEWORKS.map((f) => [f, f])} onChange={setFramework} disabled={running} />
        <Pick label="Good (older)" name="good" value={bounds.good} options={versions.map((v) => [v, v])} onChange={(good) => setBounds({ ...bounds, good })} disabled={running} />
        <Pick label="Bad (newer)" name="bad" value={bounds.bad} options={versions.map((v) => [v, v])} onChange={(bad) => setBounds({ ...bounds, bad })} disabled={running} />
        <Pick label="Metric" name="metric" value={metric} options={METRICS} onChange={setMetric} disabled={running} />
        <label>
          Fewest runs per release{" "}
          <input name="fewest" type="number" min={2} max={50} value={fewest} onInput={(e) => setFewest(Number(e.currentTarget.value))} disabled={running} />
        </label>
      </div>
      {list === null && open && error === null && <p class="hint">Asking PyPI which releases of {framework} there are…</p>}
      {list && <p class="hint">The studio runs {list.supported}; releases not installed are made from PyPI as the search needs them.</p>}
      <button type="button" id="start-bisect" disabled={running || !base || !list || bounds.good === "" || bounds.bad === ""} onClick={start}>
        {running ? "Bisecting…" : "Start bisection"}
      </button>
      {!base && <p class="hint warn">Fix the settings above first: the bisection trains them.</p>}
      {running && <BisectProgress framework={framework} />}
      <ErrorBox error={error} onClose={() => setError(null)} />
      {found && <Found found={found} />}
    </details>
  );
}
