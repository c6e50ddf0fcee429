// Shown over everything when the database the settings name could not be
// opened (from a newer studio, damaged, another program's): why, and a way to
// choose another file. Until then the studio works on an empty database in
// memory that is kept nowhere.
import { useState } from "preact/hooks";
import { save } from "@tauri-apps/plugin-dialog";
import { getCurrentWindow } from "@tauri-apps/api/window";
import { api, call } from "../api";
import { ErrorBox } from "./common";

export function DatabaseProblem({
  problem,
  database,
  onChosen,
  choose = () => save({ title: "Database file (new or existing)", filters: [{ name: "SQLite", extensions: ["sqlite", "db"] }] }),
}: {
  problem: string;
  database: string;
  onChosen: () => void;
  choose?: () => Promise<string | null>;
}) {
  const [error, setError] = useState<unknown>(null);
  async function pick() {
    try {
      const path = await choose();
      if (!path) return;
      await call(api.setDatabase(path));
      setError(null);
      onChosen();
    } catch (e) {
      setError(e);
    }
  }
  return (
    <div class="modal-backdrop">
      <div class="modal" role="alertdialog" aria-modal="true" aria-labelledby="db-problem-title" id="database-problem">
        <h2 id="db-problem-title">The database could not be opened</h2>
        <p class="hint">{database}</p>
        <p>{problem}</p>
        <p class="hint">
          Nothing was written to that file. Until you choose a database, the studio shows an empty one in memory, and
          nothing you do is kept.
        </p>
        <ErrorBox error={error} onClose={() => setError(null)} />
        <div class="buttons">
          <button type="button" onClick={() => getCurrentWindow().close()}>
            Quit
          </button>
          <button type="button" class="primary" onClick={pick} id="choose-database">
            Choose another database…
          </button>
        </div>
      </div>
    </div>
  );
}
