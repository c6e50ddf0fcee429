// Saving a figure of the app to a file the person chooses: a comparison's
// report as PDF or as one self-contained HTML page, its chart as PNG or SVG (drawn by the backend as the PDF and the CLI draw it),
// a run's raw windows, evaluations or telemetry as CSV.
import { useState } from "preact/hooks";
import { save } from "@tauri-apps/plugin-dialog";
import { api, call, type ChartKind, type ReportSelection } from "../api";
import { bytes } from "../lib/format";

/** Asks for a path, writes the file, returns the notice to show (null when the dialog was closed). */
async function saveWith(title: string, defaultPath: string, filters: { name: string; extensions: string[] }[], write: (path: string) => Promise<{ path: string; bytes: number }>) {
  const path = await save({ title, defaultPath, filters });
  if (!path) return null;
  const w = await write(path);
  return `Wrote ${w.path} (${bytes(w.bytes)}).`;
}

export function SaveChart({ selection, charts, name, onNotice, onError }: { selection: ReportSelection; charts: ChartKind[]; name: string; onNotice: (n: string) => void; onError: (e: unknown) => void }) {
  const [kind, setKind] = useState<ChartKind>(charts[0] ?? "throughput");
  async function go() {
    try {
      const n = await saveWith("Save chart", `${name}-${kind}.png`, [{ name: "PNG image", extensions: ["png"] }, { name: "SVG drawing", extensions: ["svg"] }], (path) =>
        call(api.exportChart(selection, kind, path)),
      );
      if (n) onNotice(n);
    } catch (e) {
      onError(e);
    }
  }
  if (charts.length === 0) return null;
  return (
    <span class="save-chart">
      <select aria-label="Chart to save" id="chart-to-save" value={kind} onChange={(e) => setKind(e.currentTarget.value as ChartKind)}>
        {charts.map((k) => (
          <option key={k} value={k}>
            {k.replace(/_/g, " ")}
          </option>
        ))}
      </select>
      <button type="button" id="save-chart" onClick={go}>
        Save chart (PNG/SVG)…
      </button>
    </span>
  );
}

/** The comparison's report: a PDF, or one HTML page with interactive charts that fetches nothing. */
export function SaveReport({ selection, name, disabled, onNotice, onError }: { selection: ReportSelection; name: string; disabled: boolean; onNotice: (n: string) => void; onError: (e: unknown) => void }) {
  async function go(kind: "pdf" | "html") {
    try {
      const label = kind === "pdf" ? "PDF" : "HTML";
      const n = await saveWith(`Export ${label} report`, `${name}.${kind}`, [{ name: label, extensions: [kind] }], (path) =>
        call(kind === "pdf" ? api.exportPdf(selection, path) : api.exportHtml(selection, path)),
      );
      if (n) onNotice(n);
    } catch (e) {
      onError(e);
    }
  }
  return (
    <>
      <button type="button" id="export-pdf" onClick={() => go("pdf")} disabled={disabled}>
        Export PDF…
      </button>
      <button type="button" id="export-html" onClick={() => go("html")} disabled={disabled} title="One web page with the same sections and interactive charts: it opens in any browser and fetches nothing">
        Export HTML…
      </button>
    </>
  );
}

const RAW = [
  ["windows", "Windows"],
  ["evals", "Evaluations"],
  ["telemetry", "Telemetry"],
] as const;

export function SaveRunCsv({ runId, onNotice, onError }: { runId: number; onNotice: (n: string) => void; onError: (e: unknown) => void }) {
  async function go(what: string) {
    try {
      const n = await saveWith(`Save run #${runId}'s ${what} as CSV`, `trainbench-run-${runId}-${what}.csv`, [{ name: "CSV", extensions: ["csv"] }], (path) => call(api.exportRunCsv(runId, what, path)));
      if (n) onNotice(n);
    } catch (e) {
      onError(e);
    }
  }
  return (
    <p class="save-run-csv">
      CSV:{" "}
      {RAW.map(([what, label]) => (
        <button type="button" class="small" key={what} data-raw={what} onClick={() => go(what)}>
          {label}
        </button>
      ))}
    </p>
  );
}
