// The runs table: search, filter and sort over every stored run (pure, tested).
import type { RunListItem } from "../bindings";

/** Columns the person may add to the runs table (the column chooser). */
export type OptionalColumn = "gpu" | "mfu" | "energy_j_per_sample" | "framework_version" | "host" | "duration_s";

export const OPTIONAL_COLUMNS: { key: OptionalColumn; title: string; term?: string }[] = [
  { key: "gpu", title: "GPU" },
  { key: "mfu", title: "MFU", term: "mfu" },
  { key: "energy_j_per_sample", title: "Energy / sample", term: "energy" },
  { key: "framework_version", title: "Framework version" },
  { key: "host", title: "Host" },
  { key: "duration_s", title: "Duration" },
];

export type SortKey = "id" | "status" | "label" | "throughput" | "peak_memory_bytes" | "time_to_accuracy_s" | "cost_per_epoch_usd" | "created_unix_ms" | OptionalColumn;

export interface TableQuery {
  search: string;
  status: string; // "" = any
  framework: string; // "" = any
  sort: SortKey;
  descending: boolean;
}

export const defaultQuery = (): TableQuery => ({ search: "", status: "", framework: "", sort: "id", descending: true });

function sortValue(r: RunListItem, k: SortKey): number | string | null {
  switch (k) {
    case "id":
      return r.id;
    case "status":
      return r.status;
    case "label":
      return r.label;
    case "throughput":
      return r.throughput;
    case "peak_memory_bytes":
      return r.peak_memory_bytes;
    case "time_to_accuracy_s":
      return r.time_to_accuracy_s;
    case "cost_per_epoch_usd":
      return r.cost_per_epoch_usd;
    case "created_unix_ms":
      return r.created_unix_ms;
    default:
      return r[k];
  }
}

/** The optional columns chosen, from what was saved (unknown names dropped). */
export function chosenColumns(saved: string | null): OptionalColumn[] {
  const keys = OPTIONAL_COLUMNS.map((c) => c.key as string);
  try {
    const list = JSON.parse(saved ?? "[]");
    return Array.isArray(list) ? (list.filter((k) => keys.includes(k)) as OptionalColumn[]) : [];
  } catch {
    return [];
  }
}

/** Rows matching the query, sorted; runs without the sorted figure go last. */
export function queryRuns(rows: RunListItem[], q: TableQuery): RunListItem[] {
  const terms = q.search.toLowerCase().split(/\s+/).filter(Boolean);
  const out = rows.filter((r) => {
    if (q.status && r.status !== q.status) return false;
    if (q.framework && r.framework !== q.framework) return false;
    if (terms.length === 0) return true;
    const hay = `#${r.id} ${r.label} ${r.status} ${r.status_reason ?? ""} ${r.imported_from ?? ""} ${r.host ?? ""} ${r.gpu ?? ""} ${r.framework_version ?? ""}`.toLowerCase();
    return terms.every((t) => hay.includes(t));
  });
  const dir = q.descending ? -1 : 1;
  out.sort((a, b) => {
    const va = sortValue(a, q.sort);
    const vb = sortValue(b, q.sort);
    if (va === null && vb === null) return b.id - a.id;
    if (va === null) return 1;
    if (vb === null) return -1;
    const c = typeof va === "number" && typeof vb === "number" ? va - vb : String(va).localeCompare(String(vb));
    return c !== 0 ? c * dir : b.id - a.id;
  });
  return out;
}
