// Curves over time with uPlot: the legend shows values under the cursor and
// clicking a legend entry hides its series.
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
}

export function LineChart({ title, xLabel, yLabel, y2Label, data, series, height = 220 }: Props) {
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
        { label: xLabel },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.colour,
          width: 1.5,
          spanGaps: true,
          scale: s.right ? "y2" : "y",
          points: { show: s.points ?? false },
          value: (_u: uPlot, v: number | null) => (v === null || v === undefined ? "—" : `${+v.toPrecision(4)}${s.unit ? ` ${s.unit}` : ""}`),
        })),
      ],
      legend: { live: true },
    };
    plot.current = new uPlot(opts, data as uPlot.AlignedData, el.current);
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
    // Rebuilt only when the series change; new points go through setData below.
  }, [shape, xLabel, yLabel, y2Label, height]);

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
