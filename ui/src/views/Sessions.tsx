// Saved comparison sessions: reopen, rename, delete; export to a file, import one.
import { useEffect, useState } from "preact/hooks";
import { open, save } from "@tauri-apps/plugin-dialog";
import { api, call, type SavedSession } from "../api";
import { bytes, date } from "../lib/format";
import { Confirm, ErrorBox } from "./common";

export function Sessions({ onOpen }: { onOpen: (s: SavedSession) => void }) {
  const [list, setList] = useState<SavedSession[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [renaming, setRenaming] = useState<{ id: number; name: string } | null>(null);
  const [deleting, setDeleting] = useState<SavedSession | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const load = () => call(api.listSessions()).then(setList).catch(setError);
  useEffect(() => {
    load();
  }, []);

  async function rename() {
    if (!renaming) return;
    try {
      await call(api.renameSession(renaming.id, renaming.name));
      setRenaming(null);
      await load();
    } catch (e) {
      setError(e);
    }
  }

  async function remove(s: SavedSession) {
    setDeleting(null);
    try {
      await call(api.deleteSession(s.id));
      setNotice(`Deleted session “${s.name}” (its runs stay in the runs table).`);
      await load();
    } catch (e) {
      setError(e);
    }
  }

  async function exportFile(s: SavedSession) {
    try {
      const path = await save({ title: "Export session file", defaultPath: `${s.name}.trainbench.json`, filters: [{ name: "TrainBench session", extensions: ["json"] }] });
      if (!path) return;
      const w = await call(api.exportSession(s.id, path));
      setNotice(`Wrote ${w.path} (${bytes(w.bytes)}).`);
    } catch (e) {
      setError(e);
    }
  }

  async function importFile() {
    try {
      const path = await open({ title: "Import a session file", multiple: false, directory: false, filters: [{ name: "TrainBench session", extensions: ["json"] }] });
      if (!path || Array.isArray(path)) return;
      const r = await call(api.importSession(path));
      setNotice(
        r.session_created
          ? `Imported “${r.session.name}” from ${r.from_host}: ${r.runs_imported} new run(s), ${r.runs_already_present} already here.`
          : `“${r.session.name}” is already here: nothing changed.`,
      );
      await load();
    } catch (e) {
      setError(e);
    }
  }

  return (
    <div class="view sessions">
      <h2>Saved sessions</h2>
      <div class="toolbar">
        <button type="button" onClick={importFile}>
          Import session file…
        </button>
      </div>
      {notice && <p class="notice">{notice}</p>}
      <ErrorBox error={error} onClose={() => setError(null)} />
      {list && list.length === 0 && <p class="hint">No saved sessions yet: compare runs and press “Save session”.</p>}
      {deleting && <Confirm text={`Delete session “${deleting.name}”? Its runs are kept.`} yes="Delete" onYes={() => remove(deleting)} onNo={() => setDeleting(null)} />}
      <table class="sessions-table">
        <tbody>
          {(list ?? []).map((s) => (
            <tr key={s.id} data-session={s.name}>
              <td>
                {renaming?.id === s.id ? (
                  <form
                    onSubmit={(e) => {
                      e.preventDefault();
                      rename();
                    }}
                  >
                    <input value={renaming.name} onInput={(e) => setRenaming({ id: s.id, name: e.currentTarget.value })} />
                    <button type="submit">Rename</button>
                  </form>
                ) : (
                  <button type="button" class="link open-session" onClick={() => onOpen(s)}>
                    {s.name}
                  </button>
                )}
                {s.imported_from && <span class="hint"> imported from {s.imported_from}</span>}
              </td>
              <td>{s.run_ids.length} runs</td>
              <td>{s.settings.grouping === "configurations" ? "by configuration" : "each run"}</td>
              <td>updated {date(s.updated_unix_ms)}</td>
              <td class="actions">
                <button type="button" onClick={() => setRenaming({ id: s.id, name: s.name })}>
                  Rename
                </button>
                <button type="button" onClick={() => exportFile(s)}>
                  Export…
                </button>
                <button type="button" class="danger" onClick={() => setDeleting(s)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
