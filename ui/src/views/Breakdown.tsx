// Where a step's time goes (a run's table, a comparison's stacked bars) and
// the validity badges with their evidence.
import { lookupTerm } from "../lib/glossary";
import type {
  EntryProfileGap,
  Explanation,
  OpCategory,
  OperatorProfile,
  ProfileSummary,
  StepBreakdown,
  ValidityCheck,
} from "../bindings";
import { badgeOrder, PART_COLOURS, PART_NAMES, partsPresent, STATUS_MARK, stackedBars } from "../lib/breakdown";
import { clipLabel, duration } from "../lib/format";

export function Badges({ checks }: { checks: ValidityCheck[] }) {
  if (checks.length === 0) return <p class="missing">No validity checks: the run was summarised before they existed.</p>;
  return (
    <ul class="badges" id="badges">
      {badgeOrder(checks).map((c) => (
        <li key={c.kind} class={`badge ${c.status}`} data-kind={c.kind} data-status={c.status} title={`${lookupTerm(c.kind)?.meaning ?? ""}\n${c.evidence}`.trim()}>
          <span class="mark">{STATUS_MARK[c.status]}</span> {c.kind.replace(/_/g, " ")}
          <span class="evidence">: {c.evidence}</span>
        </li>
      ))}
    </ul>
  );
}

export function BreakdownTable({ b }: { b: StepBreakdown | null | undefined }) {
  if (!b) return <p class="missing">Step breakdown not measured.</p>;
  return (
    <div class="breakdown" id="breakdown">
      <table>
        <thead>
          <tr>
            <th>Part</th>
            <th>per step</th>
            <th>per sample</th>
            <th>share</th>
            <th>95 % CI (per step)</th>
          </tr>
        </thead>
        <tbody>
          {b.parts.map((p) => (
            <tr key={p.part} data-part={p.part}>
              <td>
                <span class="swatch" style={{ background: PART_COLOURS[p.part] }} /> {PART_NAMES[p.part]}
              </td>
              <td>{duration(p.mean_s)}</td>
              <td>{duration(p.per_sample_s)}</td>
              <td>{((p.share ?? 0) * 100).toFixed(1)} %</td>
              <td>{p.ci95 ? `${duration(p.ci95.low)}–${duration(p.ci95.high)}` : "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="note">
        Means of {b.steps} split steps: parts sum to {duration(b.parts_sum_s)} against {duration(b.whole_step_s)} for
        {(b.whole_steps ?? 0) > 0 ? `${b.whole_steps} ` : ""}whole steps timed in between ({(((b.split_difference ?? 0) as number) * 100).toFixed(1)} %,{" "}
        {b.agrees ? "within" : "outside"} ±{((b.tolerance ?? 0) * 100).toFixed(1)} %)
        {b.steady_step_s !== null ? `; the timed windows' steady step is ${duration(b.steady_step_s)}` : ""}.
        {b.fused ? ` Fused: ${b.fused}.` : ""}
        {b.communication ? ` Communication: ${b.communication}.` : ""}
      </p>
    </div>
  );
}

export function StackedBars({
  entries,
  explanations,
}: {
  entries: { label: string; breakdown?: StepBreakdown | null }[];
  explanations: { entry: number; explanation: Explanation }[];
}) {
  const bars = stackedBars(entries);
  if (bars.every((b) => b.total === null)) return null;
  const row = 26;
  const labelW = 300;
  const barW = 420;
  const height = bars.length * row + 8;
  return (
    <div class="stacked" id="breakdown-bars">
      <h3>Where the step goes (per sample)</h3>
      <svg width={labelW + barW + 90} height={height} role="img" aria-label="step breakdown per entry">
        {bars.map((b, i) => (
          <g key={i} transform={`translate(0, ${i * row + 4})`}>
            <text x={labelW - 6} y={row / 2 + 2} text-anchor="end" font-size="11">
              <title>{b.label}</title>
              {clipLabel(b.label, 46)}
            </text>
            {b.total === null ? (
              <text x={labelW + 4} y={row / 2 + 2} font-size="11" class="missing">
                not measured
              </text>
            ) : (
              b.segments.map((s) => (
                <rect
                  key={s.part}
                  data-part={s.part}
                  x={labelW + s.x * barW}
                  y={3}
                  width={Math.max(0.5, s.width * barW)}
                  height={row - 8}
                  fill={PART_COLOURS[s.part]}
                >
                  <title>{`${PART_NAMES[s.part]}: ${duration(s.perSampleS)} per sample (${(s.share * 100).toFixed(1)} %)`}</title>
                </rect>
              ))
            )}
            {b.total !== null && (
              <text x={labelW + barW * b.segments.reduce((w, s) => w + s.width, 0) + 6} y={row / 2 + 2} font-size="11">
                {duration(b.total)}
              </text>
            )}
          </g>
        ))}
      </svg>
      <div class="legend">
        {partsPresent(bars).map((p) => (
          <span key={p}>
            <span class="swatch" style={{ background: PART_COLOURS[p] }} /> {PART_NAMES[p]}
          </span>
        ))}
      </div>
      {explanations.length > 0 && (
        <ul class="explanations" id="explanations">
          {explanations.map((x) => (
            <li key={x.entry}>
              {x.explanation.verdict}
              {x.explanation.granularity_note ? ` (${x.explanation.granularity_note})` : ""}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

const CATEGORY_NAMES: Record<OpCategory, string> = {
  matmul_conv: "matmul/conv",
  attention: "attention",
  norm_elementwise: "norm/elementwise",
  optimizer: "optimizer",
  memory: "memory copies",
  communication: "communication",
  other: "other",
};

/** A run's operator profile (`--profile`): categories and top operators per step. */
export function ProfileTable({ p }: { p: OperatorProfile | null | undefined }) {
  if (!p) return <p class="missing">No operator profile (a run made with the profile option has one).</p>;
  if (p.not_measured) return <p class="missing">Operator profile not measured: {p.not_measured}</p>;
  const steps = Math.max(Number(p.steps ?? 0), 1);
  const categories = p.categories ?? [];
  const ops = p.ops ?? [];
  const idle = p.idle_s ?? 0;
  const span = p.span_s ?? 0;
  const total = categories.reduce((a, c) => a + (c.self_s ?? 0), 0) + idle;
  const share = (s: number) => (total > 0 ? `${((s / total) * 100).toFixed(1)} %` : "—");
  return (
    <div class="profile" id="profile">
      <table>
        <thead>
          <tr>
            <th>Category</th>
            <th>self time per step</th>
            <th>share</th>
          </tr>
        </thead>
        <tbody>
          {categories.map((c) => (
            <tr key={c.category} data-category={c.category}>
              <td>{CATEGORY_NAMES[c.category]}</td>
              <td>{duration((c.self_s ?? 0) / steps)}</td>
              <td>{share(c.self_s ?? 0)}</td>
            </tr>
          ))}
          <tr data-category="idle">
            <td>idle</td>
            <td>{duration(idle / steps)}</td>
            <td>{share(idle)}</td>
          </tr>
        </tbody>
      </table>
      <table>
        <thead>
          <tr>
            <th>Top operators by self time</th>
            <th>category</th>
            <th>per step</th>
            <th>calls per step</th>
          </tr>
        </thead>
        <tbody>
          {ops.slice(0, 10).map((o) => (
            <tr key={o.name}>
              <td>{o.name}</td>
              <td>{CATEGORY_NAMES[o.category]}</td>
              <td>{duration((o.self_s ?? 0) / steps)}</td>
              <td>{(Number(o.calls) / steps).toFixed(1)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="note">
        {steps} steps under {p.tool}, after the timed windows: {duration(span / steps)} per step, of which{" "}
        {duration(idle / steps)} idle. {p.what}.
      </p>
    </div>
  );
}

/** The comparison's operator profiles per entry, and each entry's gap to the baseline by category. */
export function ProfileCompare({
  entries,
  gaps,
}: {
  entries: { label: string; profile?: ProfileSummary | null }[];
  gaps: EntryProfileGap[];
}) {
  const first = entries.find((e) => e.profile)?.profile;
  if (!first) return null;
  return (
    <div class="profile-compare" id="profile-compare">
      <h3>Where the step goes, by operator category</h3>
      <table>
        <thead>
          <tr>
            <th>Configuration</th>
            {first.rows.map((r) => (
              <th key={r.label}>{r.label}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={e.label}>
              <td>{e.label}</td>
              {e.profile
                ? e.profile.rows.map((r) => <td key={r.label}>{duration(r.per_sample_s ?? 0)}</td>)
                : first.rows.map((r) => (
                    <td key={r.label} class="missing">
                      not profiled
                    </td>
                  ))}
            </tr>
          ))}
        </tbody>
      </table>
      <p class="note">Self time per sample in each entry's operator profile (runs made with the profile option).</p>
      {gaps.length > 0 && (
        <ul class="explanations">
          {gaps.map((g) => (
            <li key={g.entry}>
              {g.gap.verdict} ({g.gap.note})
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
