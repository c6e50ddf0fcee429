// Curves over time with uPlot: the legend shows values under the cursor and
// clicking a legend entry hides its series. A view that draws its own legend
// (Compare's, which also hides entries everywhere) turns this one off. The
// chart follows its container's width as the window is resized.
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface LineSeries {
  label: string;
  colour: string;
  unit?: string;
  /** Draw against the right-hand axis. */
  right?: boolean;
  points?: boolean;
}

interface Props {
  title: string;
  xLabel: string;
  yLabel: string;
  y2Label?: string;
  data: (number | null)[][];
  series: LineSeries[];
  height?: number;
  /** uPlot's legend under the chart (default on). */
  legend?: boolean;
}

/** A legend value: blank until the cursor is on the chart. */
const shown = (v: number | null | undefined, unit?: string) => (v === null || v === undefined ? "" : `${+v.toPrecision(4)}${unit ? ` ${unit}` : ""}`);

export function LineChart({ title, xLabel, yLabel, y2Label, data, series, height = 220, legend = true }: Props) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = series.map((s) => `${s.label}|${s.colour}|${s.right ? 1 : 0}`).join(";");

  useEffect(() => {
    if (!el.current) return;
    const width = Math.max(320, el.current.clientWidth || 640);
    const opts: uPlot.Options = {
      width,
      height,
      scales: { x: { time: false } },
      axes: [
        { label: xLabel, stroke: "currentColor", grid: { stroke: "rgba(128,128,128,0.2)" } },
        { label: yLabel, stroke: "currentColor", grid: { stroke: "rgba(128,128,128,0.2)" }, size: 70 },
        ...(y2Label ? [{ label: y2Label, side: 1 as const, scale: "y2", stroke: "currentColor", grid: { show: false }, size: 70 }] : []),
      ],
      series: [
        { label: xLabel, value: (_u: uPlot, v: number | null) => shown(v) },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.colour,
          width: 1.5,
          spanGaps: true,
          scale: s.right ? "y2" : "y",
          points: { show: s.points ?? false },
          value: (_u: uPlot, v: number | null) => shown(v, s.unit),
        })),
      ],
      legend: { show: legend, live: true },
    };
    const u = new uPlot(opts, data as uPlot.AlignedData, el.current);
    plot.current = u;
    const container = el.current;
    const resized =
      typeof ResizeObserver === "undefined"
        ? null
        : new ResizeObserver(() => {
            const w = Math.max(320, container.clientWidth);
            if (w !== u.width) u.setSize({ width: w, height });
          });
    resized?.observe(container);
    return () => {
      resized?.disconnect();
      u.destroy();
      plot.current = null;
    };
    // Rebuilt only when the series change; new points go through setData below.
  }, [shape, xLabel, yLabel, y2Label, height, legend]);

  useEffect(() => {
    plot.current?.setData(data as uPlot.AlignedData);
  }, [data]);

  return (
    <figure class="chart line" data-chart={title}>
      <figcaption>{title}</figcaption>
      <div ref={el} />
    </figure>
  );
}
