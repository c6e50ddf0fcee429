// A run against the world: beside the published record of its model family,
// and projected to hardware it did not run on ("what if"). Every projected
// figure is a band and says so; measurements are never mixed in.
import { useEffect, useState } from "preact/hooks";
import { type Against, api, type Band, call, type Projected, type RecordPlacement } from "../api";
import { ErrorBox } from "./common";

/** A share as a person reads it: "41 %", "4.1 %", "0.041 %" (as the CLI prints it). */
export function percent(fraction: number | null): string {
  const p = 100 * (fraction ?? 0);
  if (p >= 10) return `${p.toFixed(0)} %`;
  if (p >= 1) return `${p.toFixed(1)} %`;
  if (p > 0) return `${p.toFixed(Math.ceil(-Math.log10(p)) + 1)} %`;
  return "0 %";
}

/** "620 % of timm … ViT-B/16 on 1x RTX 3090 (github.com, 2022-07-27)", the address behind its site's name. */
function Placed({ a }: { a: Against }) {
  const r = a.reference;
  let site = r.source;
  try {
    site = new URL(r.source).hostname;
  } catch {
    // Not a URL: shown whole.
  }
  return (
    <>
      {percent(a.fraction)} of {r.framework} {r.model} on {r.hardware} (
      <a href={r.source} title={r.source} target="_blank" rel="noreferrer">
        {site}
      </a>
      , {r.date}) per device, by achieved FLOP/s
    </>
  );
}

export function VsRecord({ runId }: { runId: number }) {
  const [placed, setPlaced] = useState<RecordPlacement | null>(null);
  const [anyway, setAnyway] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setAnyway(false);
  }, [runId]);
  useEffect(() => {
    call(api.vsRecord(runId, anyway)).then(setPlaced).catch(setError);
  }, [runId, anyway]);
  if (error) return <ErrorBox error={error} />;
  if (placed === null) return null;
  if (placed.not_placed !== null) {
    return (
      <section class="vs-record">
        <h4>Beside the published record</h4>
        <p class="hint" id="not-placed">
          Not placed: {placed.not_placed}.{" "}
          <button type="button" class="link" id="place-anyway" onClick={() => setAnyway(true)}>
            Place it anyway
          </button>
        </p>
      </section>
    );
  }
  if (placed.against.length === 0) return null;
  return (
    <section class="vs-record">
      <h4>Beside the published record</h4>
      <p class="hint">This run's achieved FLOP/s per device against published results of its model family (closest first); every difference is listed.</p>
      <ul>
        {placed.against.slice(0, 3).map((a) => (
          <li key={a.reference.id}>
            <Placed a={a} />
            {a.differs.length > 0 && <div class="hint">differs: {a.differs.join("; ")}</div>}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Each compared run beside its closest published result where that means
 * something (the comparison view); otherwise, once, why not. */
export function CompareRecord({ runIds }: { runIds: number[] }) {
  const [rows, setRows] = useState<[number, Against][]>([]);
  const [reasons, setReasons] = useState<string[]>([]);
  useEffect(() => {
    call(api.compareRecord(runIds))
      .then((p) => {
        setRows(p.closest);
        setReasons(p.not_placed);
      })
      .catch(() => {
        setRows([]);
        setReasons([]);
      });
  }, [runIds.join(",")]);
  if (rows.length === 0 && reasons.length === 0) return null;
  return (
    <section class="vs-record" id="compare-record">
      <h3>Beside the published record</h3>
      {reasons.length > 0 && (
        <p class="hint" id="compare-not-placed">
          {rows.length > 0 ? "Some runs are not placed" : "Not placed"}: {reasons.join("; ")}. A run's panel (Runs) places it anyway.
        </p>
      )}
      {rows.length > 0 && (
        <>
          <p class="hint">Each run's achieved FLOP/s per device against the closest published result of its model family; the run's panel (Runs) lists more, with every difference.</p>
          <ul>
            {rows.map(([id, a]) => (
              <li key={id}>
                #{id}: <Placed a={a} />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function band(b: Band, digits: number): string {
  const f = (x: number | null) => (x === null ? "—" : x.toLocaleString("en-GB", { maximumFractionDigits: digits, minimumFractionDigits: digits }));
  return `${f(b.low)} – ${f(b.high)} (middle ${f(b.mid)})`;
}

export function WhatIf({ runId }: { runId: number }) {
  const [targets, setTargets] = useState<string[]>([]);
  const [target, setTarget] = useState("H100 SXM");
  const [result, setResult] = useState<Projected | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    call(api.projectionTargets()).then(setTargets).catch(setError);
    setResult(null);
  }, [runId]);
  async function projectIt() {
    setError(null);
    try {
      const threads = target.startsWith("threads:") ? Number(target.slice(8)) : null;
      setResult(await call(api.whatIf(runId, threads === null ? target : null, threads)));
    } catch (e) {
      setResult(null);
      setError(e);
    }
  }
  return (
    <section class="what-if">
      <h4>What if… (projected)</h4>
      <p class="hint">This run projected to hardware it did not run on: a band from its step's parts, or from the MFU its model family reaches in published results. Projected, not measured.</p>
      <label for="what-if-target">Project to</label>{" "}
      <select id="what-if-target" name="what_if_target" value={target} onChange={(e) => setTarget(e.currentTarget.value)}>
        {targets.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
        <option value="threads:1">this CPU, 1 thread</option>
        <option value="threads:2">this CPU, 2 threads</option>
        <option value="threads:4">this CPU, 4 threads</option>
      </select>{" "}
      <button type="button" onClick={projectIt}>
        Project
      </button>
      <ErrorBox error={error} onClose={() => setError(null)} />
      {result && (
        <dl class="kv projected" data-projected="true">
          <dt>Projected on</dt>
          <dd>
            {result.to} (measured on {result.from}) — <strong>projected, not measured</strong>
          </dd>
          <dt>Samples/s</dt>
          <dd>
            {band(result.samples_per_s, 1)}; measured on its own hardware {(result.measured_samples_per_s ?? 0).toFixed(1)}
          </dd>
          <dt>Epoch</dt>
          <dd>{result.epoch_s ? `${band(result.epoch_s, 0)} s` : "no epoch: the run's data has no epoch size"}</dd>
          <dt>Cost per epoch</dt>
          <dd>{result.cost_per_epoch_usd ? `$ ${band(result.cost_per_epoch_usd, 2)} (${result.price})` : result.price}</dd>
          <dt>Memory</dt>
          <dd>{result.memory}</dd>
          <dt>Energy per sample</dt>
          <dd>{result.energy_j_per_sample ? `${band(result.energy_j_per_sample, 4)} J (${result.energy})` : result.energy}</dd>
          <dt>Method</dt>
          <dd class="hint">{result.method}</dd>
        </dl>
      )}
    </section>
  );
}
