// Database location, price table (Prices), framework environments, remote hosts, theme.
import { useEffect, useState } from "preact/hooks";
import { save } from "@tauri-apps/plugin-dialog";
import { api, call, type AppInfo, type DatabaseSource, type FrameworkEnv, type Theme } from "../api";
import { ErrorBox } from "./common";
import { Hosts } from "./Hosts";
import { Prices } from "./Prices";

/** Why the studio works on the database it does, in words. */
function databaseSource(source: DatabaseSource): string {
  switch (source) {
    case "environment":
      return "Fixed by the TRAINBENCH_DB environment variable: unset it to choose another here.";
    case "settings":
      return "Chosen here.";
    case "default":
      return "The default: trainbench.sqlite in the studio's home folder (TRAINBENCH_HOME moves it).";
    case "flag":
      return "Named on the command line.";
  }
}

export function Settings({ info, onChanged }: { info: AppInfo; onChanged: () => void }) {
  const [envs, setEnvs] = useState<FrameworkEnv[]>([]);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    call(api.environments()).then(setEnvs).catch(setError);
  }, []);

  async function pickDatabase() {
    try {
      const path = await save({ title: "Database file (new or existing)", defaultPath: info.settings.database, filters: [{ name: "SQLite", extensions: ["sqlite", "db"] }] });
      if (!path) return;
      await call(api.setDatabase(path));
      onChanged();
    } catch (e) {
      setError(e);
    }
  }

  async function setTheme(t: Theme) {
    try {
      await call(api.setTheme(t));
      onChanged();
    } catch (e) {
      setError(e);
    }
  }

  return (
    <div class="view settings">
      <h2>Settings</h2>
      <ErrorBox error={error} onClose={() => setError(null)} />
      <section>
        <h3>Database</h3>
        <p>
          <code id="db-path">{info.settings.database}</code> <button type="button" onClick={pickDatabase} disabled={info.settings.database_source === "environment"}>Change…</button>
        </p>
        <p class="hint" id="db-source">{databaseSource(info.settings.database_source)}</p>
        {info.settings.problem && <p class="hint warn">{info.settings.problem}</p>}
        <p class="hint">
          Settings are kept in {info.settings.file}; the <code>trainbench</code> command line reads the same file, so
          it uses this database too.
        </p>
      </section>
      <section>
        <h3>Theme</h3>
        {(["system", "light", "dark"] as Theme[]).map((t) => (
          <label key={t} class="inline">
            <input type="radio" name="theme" checked={info.settings.theme === t} onChange={() => setTheme(t)} />
            {t === "system" ? "follow the desktop" : t}
          </label>
        ))}
      </section>
      <section>
        <h3>Framework environments</h3>
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Framework</th>
              <th>Version</th>
              <th>Python</th>
              <th>State</th>
            </tr>
          </thead>
          <tbody>
            {envs.map((e) => (
              <tr key={e.name}>
                <td>{e.name}</td>
                <td>{e.framework}</td>
                <td>{e.version ?? "unknown"}</td>
                <td>
                  <code>{e.python}</code>
                </td>
                <td>{e.ready ? "ready" : "not ready"}{e.builtin ? " (installed by the studio)" : " (registered)"}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p class="hint">Missing frameworks can be installed from “New benchmark”; register another environment with <code>trainbench env register</code>.</p>
      </section>
      <Hosts />
      <Prices onChanged={onChanged} />
    </div>
  );
}
