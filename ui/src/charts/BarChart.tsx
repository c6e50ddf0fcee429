// Horizontal bars with 95 % CI whiskers, drawn as SVG. Hovering a bar shows
// its value, interval and note; clicking a legend entry hides or shows it.
import { useState } from "preact/hooks";
import type { Bar } from "../lib/shape";
import { barScale } from "../lib/shape";
import { clipLabel, NOT_MEASURED, num } from "../lib/format";

interface Props {
  title: string;
  unit: string;
  bars: Bar[];
  onToggle: (key: string) => void;
  /** The winner (starred) and the baseline (a dashed line at its value), by key. */
  marks?: { best: string | null; baseline: string | null };
}

const ROW = 26;
const LABEL_W = 260;
const WIDTH = 720;
const PLOT_W = WIDTH - LABEL_W - 90;

export function BarChart({ title, unit, bars, onToggle, marks }: Props) {
  const [hover, setHover] = useState<string | null>(null);
  const visible = bars.filter((b) => !b.hidden);
  const max = barScale(bars);
  const x = (v: number) => LABEL_W + (Math.max(0, v) / max) * PLOT_W;
  const height = visible.length * ROW + 34;
  const hovered = bars.find((b) => b.key === hover);
  const base = visible.find((b) => b.key === marks?.baseline && b.value !== null);
  return (
    <figure class="chart" data-chart={title}>
      <figcaption>
        {title} <span class="unit">({unit})</span>
      </figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${height}`} width="100%" role="img" aria-label={`${title} in ${unit}`}>
        <line x1={LABEL_W} x2={LABEL_W} y1={4} y2={height - 26} class="axis" />
        {[0, 0.25, 0.5, 0.75, 1].map((f) => (
          <g key={f}>
            <line x1={x(max * f)} x2={x(max * f)} y1={4} y2={height - 26} class="grid" />
            <text x={x(max * f)} y={height - 10} class="tick" text-anchor="middle">
              {num(max * f, 3)}
            </text>
          </g>
        ))}
        {base?.value != null && (
          <line x1={x(base.value)} x2={x(base.value)} y1={2} y2={height - 26} class="baseline-line">
            <title>the baseline: {base.label}</title>
          </line>
        )}
        {visible.map((b, i) => {
          const y = 6 + i * ROW;
          return (
            // biome-ignore lint/a11y/useSemanticElements: an SVG group cannot be a <button>
            <g
              key={b.key}
              class={hover === b.key ? "bar hover" : "bar"}
              // Focusable, so the keyboard shows a bar's figures as hovering does.
              role="button"
              tabIndex={0}
              aria-label={tooltip(b, unit)}
              onMouseEnter={() => setHover(b.key)}
              onMouseLeave={() => setHover(null)}
              onFocus={() => setHover(b.key)}
              onBlur={() => setHover(null)}
              data-key={b.key}
            >
              <title>{tooltip(b, unit)}</title>
              <text x={LABEL_W - 6} y={y + ROW / 2 + 2} class={b.key === marks?.best ? "label best" : "label"} text-anchor="end">
                {b.key === marks?.best ? `★ ${clipLabel(b.label, 38)}` : clipLabel(b.label, 40)}
              </text>
              {b.value === null ? (
                <text x={LABEL_W + 6} y={y + ROW / 2 + 2} class="missing">
                  {b.note ?? NOT_MEASURED}
                </text>
              ) : (
                <>
                  <rect x={LABEL_W} y={y + 3} width={Math.max(1, x(b.value) - LABEL_W)} height={ROW - 8} fill={b.colour} />
                  {b.low !== null && b.high !== null && (
                    <g class="whisker">
                      <line x1={x(b.low)} x2={x(b.high)} y1={y + ROW / 2 - 1} y2={y + ROW / 2 - 1} />
                      <line x1={x(b.low)} x2={x(b.low)} y1={y + 6} y2={y + ROW - 8} />
                      <line x1={x(b.high)} x2={x(b.high)} y1={y + 6} y2={y + ROW - 8} />
                    </g>
                  )}
                  <text x={x(Math.max(b.value, b.high ?? 0)) + 5} y={y + ROW / 2 + 2} class="value">
                    {num(b.value, 4)}
                    {b.note ? ` (${b.note})` : ""}
                  </text>
                </>
              )}
            </g>
          );
        })}
      </svg>
      <div class="tooltip" aria-live="polite">
        {hovered ? tooltip(hovered, unit) : "\u00a0"}
      </div>
      <Legend items={bars.map((b) => ({ key: b.key, label: b.label, colour: b.colour, hidden: b.hidden }))} onToggle={onToggle} />
    </figure>
  );
}

export function tooltip(b: Bar, unit: string): string {
  if (b.value === null) return `${b.label}: ${b.note ?? NOT_MEASURED}`;
  const ci = b.low !== null && b.high !== null ? `, 95 % CI ${num(b.low, 4)} – ${num(b.high, 4)}` : ", no interval";
  return `${b.label}: ${num(b.value, 4)} ${unit}${ci}${b.note ? ` (${b.note})` : ""}`;
}

export function Legend({
  items,
  onToggle,
}: {
  items: { key: string; label: string; colour: string; hidden: boolean }[];
  onToggle: (key: string) => void;
}) {
  return (
    <ul class="legend">
      {items.map((it) => (
        <li key={it.key}>
          <button
            type="button"
            class={it.hidden ? "off" : ""}
            aria-pressed={!it.hidden}
            title={it.hidden ? "Show this series" : "Hide this series"}
            onClick={() => onToggle(it.key)}
          >
            <span class="swatch" style={{ background: it.colour }} />
            {it.label}
          </button>
        </li>
      ))}
    </ul>
  );
}
