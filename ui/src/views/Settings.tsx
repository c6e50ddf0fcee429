// Database location, price table, framework environments, remote hosts, theme.
import { useEffect, useState } from "preact/hooks";
import { save } from "@tauri-apps/plugin-dialog";
import { api, call, type AppInfo, type DatabaseSource, type FrameworkEnv, type PriceEntry, type PriceRow, type Theme } from "../api";
import { ErrorBox } from "./common";
import { Hosts } from "./Hosts";

const emptyPrice = (): PriceRow => ({ offering: "", devices: 1, device: "", usd_per_hour: 0, usd_per_device_hour: 0, as_of: new Date().toISOString().slice(0, 10), source: "" });

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
  const [prices, setPrices] = useState<PriceEntry[]>([]);
  const [envs, setEnvs] = useState<FrameworkEnv[]>([]);
  const [edit, setEdit] = useState<PriceRow | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    call(api.prices()).then(setPrices).catch(setError);
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

  async function savePrice() {
    if (!edit) return;
    try {
      setPrices(await call(api.savePrice(edit)));
      setEdit(null);
      setError(null);
      onChanged();
    } catch (e) {
      setError(e);
    }
  }

  const field = (k: keyof PriceRow, label: string, type = "text") => (
    <label>
      {label}
      <input
        name={k}
        type={type}
        step="any"
        value={String(edit?.[k] ?? "")}
        onInput={(e) => {
          const v = e.currentTarget.value;
          setEdit((p) => (p ? { ...p, [k]: type === "number" ? Number(v) : v } : p));
        }}
      />
    </label>
  );

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
      <section>
        <h3>Price table</h3>
        <button type="button" onClick={() => setEdit(emptyPrice())}>
          Add a price
        </button>
        {edit && (
          <form
            class="price-form"
            onSubmit={(e) => {
              e.preventDefault();
              savePrice();
            }}
          >
            {field("offering", "Offering")}
            {field("device", "Device")}
            {field("devices", "Devices", "number")}
            {field("usd_per_hour", "USD per hour", "number")}
            {field("usd_per_device_hour", "USD per device-hour", "number")}
            {field("as_of", "As of (YYYY-MM-DD or YYYY-MM)")}
            {field("source", "Source")}
            <button type="submit" class="primary">
              Save price
            </button>
            <button type="button" onClick={() => setEdit(null)}>
              Cancel
            </button>
          </form>
        )}
        <table class="prices">
          <thead>
            <tr>
              <th>Offering</th>
              <th>Device</th>
              <th>USD/h</th>
              <th>As of</th>
              <th>Source</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {prices.map((p) => (
              <tr key={p.row.offering}>
                <td>
                  {p.row.offering}
                  {p.by_user && <span class="hint"> (yours)</span>}
                </td>
                <td>
                  {p.row.devices} × {p.row.device}
                </td>
                <td class="num">{p.row.usd_per_hour === null ? "—" : p.row.usd_per_hour.toFixed(2)}</td>
                <td>{p.row.as_of}</td>
                <td class="source">{p.row.source}</td>
                <td>
                  <button type="button" class="small" onClick={() => setEdit({ ...p.row })}>
                    Edit
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </div>
  );
}
