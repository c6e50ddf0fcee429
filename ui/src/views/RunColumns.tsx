// The runs table's optional columns: GPU, MFU, energy per sample, framework
// version, host, duration — chosen by the person, remembered in this window's
// local storage.
import { useState } from "preact/hooks";
import type { RunListItem } from "../api";
import { num, seconds } from "../lib/format";
import { chosenColumns, OPTIONAL_COLUMNS, type OptionalColumn } from "../lib/table";
import { Explained } from "./Glossary";

const STORAGE = "trainbench.runs.columns";

/** The columns chosen, and a setter that remembers them. */
export function useColumns(): [OptionalColumn[], (c: OptionalColumn[]) => void] {
  const [cols, setCols] = useState<OptionalColumn[]>(() => {
    try {
      return chosenColumns(localStorage.getItem(STORAGE));
    } catch {
      return [];
    }
  });
  return [
    cols,
    (c) => {
      setCols(c);
      // Remembering is a convenience: a window without local storage (or
      // with it full) still shows the columns chosen.
      try {
        localStorage.setItem(STORAGE, JSON.stringify(c));
      } catch {
        // not remembered
      }
    },
  ];
}

export function ColumnPicker({ chosen, onChange }: { chosen: OptionalColumn[]; onChange: (c: OptionalColumn[]) => void }) {
  return (
    <details class="column-picker" id="column-picker">
      <summary>Columns</summary>
      {OPTIONAL_COLUMNS.map((c) => (
        <label key={c.key} class="inline">
          <input
            type="checkbox"
            name={`column-${c.key}`}
            checked={chosen.includes(c.key)}
            onChange={() => onChange(chosen.includes(c.key) ? chosen.filter((k) => k !== c.key) : OPTIONAL_COLUMNS.map((o) => o.key).filter((k) => k === c.key || chosen.includes(k)))}
          />
          {c.title}
        </label>
      ))}
    </details>
  );
}

/** A chosen column's cell for one run. */
export function OptionalCell({ column, r }: { column: OptionalColumn; r: RunListItem }) {
  const missing = (why: string) => <span class="missing">{why}</span>;
  switch (column) {
    case "gpu":
      return <td>{r.gpu ?? (r.host ? "CPU" : missing("not started"))}</td>;
    case "mfu":
      return <td class="num">{r.mfu === null ? missing(r.gpu ? "not measured" : "no GPU peak") : `${(r.mfu * 100).toFixed(1)} %`}</td>;
    case "energy_j_per_sample":
      return <td class="num">{r.energy_j_per_sample === null ? missing("not measured") : `${num(r.energy_j_per_sample)} J`}</td>;
    case "framework_version":
      return <td>{r.framework_version ?? missing("not reported")}</td>;
    case "host":
      return <td>{r.host ?? missing("not started")}</td>;
    case "duration_s":
      return <td class="num">{seconds(r.duration_s)}</td>;
  }
}

/** A chosen column's header text, explained where the glossary has it. */
export function optionalTitle(column: OptionalColumn) {
  const c = OPTIONAL_COLUMNS.find((o) => o.key === column);
  if (!c) return column;
  return c.term ? <Explained k={c.term}>{c.title}</Explained> : c.title;
}
