// Every stored run: search, filter, sort; select to compare, export or
// delete (asks first); open one for its detail (RunDetail).
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { save } from "@tauri-apps/plugin-dialog";
import { api, call, type LeftOutRun, type RunListItem } from "../api";
import { bytes, date, num, seconds, usd } from "../lib/format";
import { typing, useKeydown } from "../lib/keys";
import { useFinishedCount } from "../lib/queueWatch";
import { defaultQuery, queryRuns, type OptionalColumn, type SortKey, type TableQuery } from "../lib/table";
import { Confirm, ErrorBox } from "./common";
import { ColumnPicker, OptionalCell, optionalTitle, useColumns } from "./RunColumns";
import { RunDetailPanel } from "./RunDetail";


const PAGE = 300;

interface Props {
  openRun: number | null;
  onOpenRun: (id: number | null) => void;
  onCompare: (ids: number[]) => void;
  /** Opens the welcome view (the quick benchmark) or the wizard. */
  onStart: (where: "welcome" | "wizard") => void;
}

/** What an empty database offers instead of an empty table. */
function NoRuns({ onStart }: { onStart: Props["onStart"] }) {
  return (
    <div class="empty-state" id="runs-empty">
      <p>
        <strong>No runs stored yet.</strong> Every benchmark you run is stored here, with its figures, its curves and how it was measured.
      </p>
      <p>
        <button type="button" class="primary" onClick={() => onStart("welcome")}>
          Run the quick benchmark
        </button>{" "}
        <button type="button" onClick={() => onStart("wizard")}>
          Set up a benchmark
        </button>
      </p>
      <p class="hint">Runs from another machine come in through Sessions → Import.</p>
    </div>
  );
}

/** One line per stored run left out because its row is damaged: the run,
 * the column, the value and what is allowed there. */
function LeftOut({ runs }: { runs: LeftOutRun[] }) {
  if (runs.length === 0) return null;
  return (
    <ul class="warnings" id="runs-left-out">
      {runs.map((l) => (
        <li key={l.run} data-run={l.run} data-column={l.column}>
          {l.message}
        </li>
      ))}
    </ul>
  );
}

interface ToolbarProps {
  query: TableQuery;
  onQuery: (q: TableQuery) => void;
  statuses: string[];
  frameworks: string[];
  /** How many runs the filters leave, and how many are stored. */
  visible: number;
  total: number;
  picked: Set<number>;
  /** Whether there is a run to export. */
  anyRuns: boolean;
  onCompare: () => void;
  onExport: () => void;
  onDelete: () => void;
  columns: OptionalColumn[];
  onColumns: (c: OptionalColumn[]) => void;
}

/** Search, filters, what is selected, and what can be done with it. */
function RunsToolbar({ query, onQuery, statuses, frameworks, visible, total, picked, anyRuns, onCompare, onExport, onDelete, columns, onColumns }: ToolbarProps) {
  return (
    <div class="toolbar">
      <input type="search" id="run-search" placeholder="Search runs (model, framework, #id …)  /" value={query.search} onInput={(e) => onQuery({ ...query, search: e.currentTarget.value })} />
      <select aria-label="Status" value={query.status} onChange={(e) => onQuery({ ...query, status: e.currentTarget.value })}>
        <option value="">any status</option>
        {statuses.map((s) => (
          <option key={s}>{s}</option>
        ))}
      </select>
      <select aria-label="Framework" value={query.framework} onChange={(e) => onQuery({ ...query, framework: e.currentTarget.value })}>
        <option value="">any framework</option>
        {frameworks.map((s) => (
          <option key={s}>{s}</option>
        ))}
      </select>
      <span class="hint">
        {visible} of {total} runs · {picked.size} selected
      </span>
      <button type="button" id="compare-selected" disabled={picked.size < 2} onClick={onCompare}>
        Compare selected
      </button>
      <button type="button" disabled={!anyRuns} onClick={onExport}>
        Export CSV{picked.size > 0 ? " (selected)" : " (all)"}
      </button>
      <button type="button" class="danger" disabled={picked.size === 0} onClick={onDelete}>
        Delete…
      </button>
      <ColumnPicker chosen={columns} onChange={onColumns} />
    </div>
  );
}

interface RowProps {
  r: RunListItem;
  /** Whether its detail is the one open beside the table. */
  open: boolean;
  picked: boolean;
  onToggle: () => void;
  onOpen: () => void;
  columns: OptionalColumn[];
}

/** One run of the table: select, open, and its figures. */
function RunRow({ r, open, picked, onToggle, onOpen, columns }: RowProps) {
  return (
    <tr data-run={r.id} class={open ? "selected" : ""}>
      <td>
        <input type="checkbox" aria-label={`Select run ${r.id}`} checked={picked} onChange={onToggle} />
      </td>
      <td>
        <button type="button" class="link" onClick={onOpen}>
          #{r.id}
        </button>
      </td>
      <td>
        <span class={`badge ${r.status}`} title={r.status_reason ?? ""}>
          {r.status}
        </span>
      </td>
      <td>
        {r.label}
        {r.imported_from && <span class="hint"> (imported from {r.imported_from})</span>}
      </td>
      <td class="num">
        {r.throughput === null ? <span class="missing">not measured</span> : num(r.throughput, 4)}
        {r.throughput_low !== null && r.throughput_high !== null && <span class="ci"> [{num(r.throughput_low, 3)}–{num(r.throughput_high, 3)}]</span>}
      </td>
      <td class="num">{bytes(r.peak_memory_bytes)}</td>
      <td class="num">
        {r.target_accuracy === null ? <span class="missing">no target</span> : r.target_reached === false ? "not reached" : seconds(r.time_to_accuracy_s)}
      </td>
      <td class="num">
        {r.price_offering === null ? (
          <span class="missing">no price</span>
        ) : (
          <>
            {usd(r.cost_per_epoch_usd)}
            {r.cost_is_projected && (
              <span class="hint" title="for an epoch the run did not train through: the epoch size at the measured throughput">
                {" "}
                projected
              </span>
            )}
          </>
        )}
      </td>
      {columns.map((c) => (
        <OptionalCell key={c} column={c} r={r} />
      ))}
      <td>{date(r.created_unix_ms)}</td>
    </tr>
  );
}

interface TableProps {
  rows: RunListItem[] | null;
  visible: RunListItem[];
  query: TableQuery;
  onSort: (k: SortKey) => void;
  columns: OptionalColumn[];
  picked: Set<number>;
  onToggle: (id: number) => void;
  openRun: number | null;
  onOpenRun: (id: number) => void;
}

/** The runs the filters leave, sorted, a page at a time. */
function RunsTable({ rows, visible, query, onSort, columns, picked, onToggle, openRun, onOpenRun }: TableProps) {
  const [shown, setShown] = useState(PAGE);
  const th = (k: SortKey, text: ComponentChildren) => (
    <th key={k}>
      <button type="button" class="link" onClick={() => onSort(k)}>
        {text}
        {query.sort === k ? (query.descending ? " ▼" : " ▲") : ""}
      </button>
    </th>
  );
  return (
    <div class="table-wrap" hidden={rows !== null && rows.length === 0}>
      <table class="runs-table">
        <thead>
          <tr>
            <th />
            {th("id", "#")}
            {th("status", "Status")}
            {th("label", "Configuration")}
            {th("throughput", "Throughput (samples/s)")}
            {th("peak_memory_bytes", "Peak memory")}
            {th("time_to_accuracy_s", "Time to accuracy")}
            {th("cost_per_epoch_usd", "Cost / epoch")}
            {columns.map((c) => th(c, optionalTitle(c)))}
            {th("created_unix_ms", "Created")}
          </tr>
        </thead>
        <tbody>
          {visible.slice(0, shown).map((r) => (
            <RunRow key={r.id} r={r} open={r.id === openRun} picked={picked.has(r.id)} onToggle={() => onToggle(r.id)} onOpen={() => onOpenRun(r.id)} columns={columns} />
          ))}
        </tbody>
      </table>
      {visible.length > shown && (
        <button type="button" onClick={() => setShown(shown + PAGE)}>
          Show {Math.min(PAGE, visible.length - shown)} more
        </button>
      )}
    </div>
  );
}

export function Runs({ openRun, onOpenRun, onCompare, onStart }: Props) {
  const [rows, setRows] = useState<RunListItem[] | null>(null);
  // Runs whose stored row is damaged: named with the column, never hidden.
  const [leftOut, setLeftOut] = useState<LeftOutRun[]>([]);
  const [query, setQuery] = useState<TableQuery>(defaultQuery);
  const [picked, setPicked] = useState<Set<number>>(new Set());
  const [error, setError] = useState<unknown>(null);
  const [asking, setAsking] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  const load = () =>
    call(api.listRuns())
      .then((r) => {
        setRows(r.runs);
        setLeftOut(r.left_out);
      })
      .catch(setError);
  // Loaded on opening and again each time the queue finishes a run.
  const finished = useFinishedCount();
  useEffect(() => {
    load();
  }, [finished]);

  const visible = useMemo(() => (rows ? queryRuns(rows, query) : []), [rows, query]);
  const frameworks = useMemo(() => Array.from(new Set((rows ?? []).map((r) => r.framework))).sort(), [rows]);
  const statuses = useMemo(() => Array.from(new Set((rows ?? []).map((r) => r.status))).sort(), [rows]);

  const [columns, setColumns] = useColumns();
  const sortBy = (k: SortKey) => setQuery((q) => ({ ...q, sort: k, descending: q.sort === k ? !q.descending : true }));
  const toggle = (id: number) =>
    setPicked((p) => {
      const n = new Set(p);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });

  // Delete (outside a field) asks to delete the selected runs.
  useKeydown((e) => {
    if (e.key === "Delete" && !typing(e.target) && picked.size > 0 && !asking) {
      e.preventDefault();
      setAsking(true);
    }
  });

  async function remove() {
    setAsking(false);
    try {
      const n = await call(api.deleteRuns([...picked]));
      setNotice(`Deleted ${n} run(s).`);
      setPicked(new Set());
      if (openRun !== null && picked.has(openRun)) onOpenRun(null);
      await load();
    } catch (e) {
      setError(e);
    }
  }

  async function exportCsv() {
    try {
      const path = await save({ title: "Export runs as CSV", defaultPath: "trainbench-runs.csv", filters: [{ name: "CSV", extensions: ["csv"] }] });
      if (!path) return;
      const w = await call(api.exportCsv([...picked], path));
      setNotice(`Wrote ${w.path} (${bytes(w.bytes)}).`);
    } catch (e) {
      setError(e);
    }
  }

  return (
    <div class="view runs">
      <h2>Runs</h2>
      <ErrorBox error={error} onClose={() => setError(null)} />
      {notice && <p class="notice">{notice}</p>}
      <RunsToolbar
        query={query}
        onQuery={setQuery}
        statuses={statuses}
        frameworks={frameworks}
        visible={visible.length}
        total={rows?.length ?? 0}
        picked={picked}
        anyRuns={rows !== null && rows.length > 0}
        onCompare={() => onCompare([...picked].sort((a, b) => a - b))}
        onExport={exportCsv}
        onDelete={() => setAsking(true)}
        columns={columns}
        onColumns={setColumns}
      />
      {asking && (
        <Confirm
          text={`Delete ${picked.size} run(s) and everything stored about them? This cannot be undone.`}
          yes="Delete"
          onYes={remove}
          onNo={() => setAsking(false)}
        />
      )}
      <LeftOut runs={leftOut} />
      {rows !== null && rows.length === 0 && leftOut.length === 0 && <NoRuns onStart={onStart} />}
      <div class="split">
        <RunsTable rows={rows} visible={visible} query={query} onSort={sortBy} columns={columns} picked={picked} onToggle={toggle} openRun={openRun} onOpenRun={onOpenRun} />
        {openRun !== null && <RunDetailPanel key={openRun} runId={openRun} onClose={() => onOpenRun(null)} />}
      </div>
    </div>
  );
}
