// How numbers look everywhere in the studio. A value that was not measured
// is shown as "not measured" (or the reason given), never as 0.

export const NOT_MEASURED = "not measured";

export function num(v: number | null | undefined, digits = 3): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return NOT_MEASURED;
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(2);
  return v.toLocaleString("en-US", { maximumSignificantDigits: digits });
}

export function rate(v: number | null | undefined): string {
  return v === null || v === undefined || !Number.isFinite(v) ? NOT_MEASURED : `${num(v, 4)} samples/s`;
}

export function bytes(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return NOT_MEASURED;
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let x = v;
  let i = 0;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return `${x.toLocaleString("en-US", { maximumFractionDigits: i === 0 ? 0 : 1 })} ${units[i]}`;
}

export function seconds(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return NOT_MEASURED;
  if (v < 1) return `${(v * 1000).toFixed(0)} ms`;
  if (v < 120) return `${v.toFixed(1)} s`;
  if (v < 7200) return `${(v / 60).toFixed(1)} min`;
  return `${(v / 3600).toFixed(2)} h`;
}

export function usd(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return NOT_MEASURED;
  return v < 0.01 ? `$${v.toPrecision(2)}` : `$${v.toFixed(2)}`;
}

export function count(v: number): string {
  if (v >= 1e9) return `${(v / 1e9).toFixed(2)} B`;
  if (v >= 1e6) return `${(v / 1e6).toFixed(1)} M`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)} k`;
  return String(v);
}

export function flops(v: number): string {
  if (v >= 1e12) return `${(v / 1e12).toFixed(2)} TFLOP`;
  if (v >= 1e9) return `${(v / 1e9).toFixed(2)} GFLOP`;
  if (v >= 1e6) return `${(v / 1e6).toFixed(1)} MFLOP`;
  return `${v.toFixed(0)} FLOP`;
}

/** A relative difference as "+12.3 %" / "−4.0 %". */
export function delta(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return "";
  const p = v * 100;
  const sign = p > 0 ? "+" : p < 0 ? "−" : "±";
  return `${sign}${Math.abs(p).toFixed(1)} %`;
}

export function date(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** Short durations as a person reads them: s, ms or µs (core's fmt_s). */
export function duration(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return NOT_MEASURED;
  const a = Math.abs(v);
  if (a >= 1) return `${v.toFixed(3)} s`;
  if (a >= 1e-3) return `${(v * 1e3).toFixed(3)} ms`;
  return `${(v * 1e6).toFixed(1)} µs`;
}

/** A label cut to `max` characters at its end (its start, which tells entries
 * apart, is kept), with "…" where it was cut. */
export function clipLabel(label: string, max: number): string {
  const chars = [...label];
  return chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : label;
}
