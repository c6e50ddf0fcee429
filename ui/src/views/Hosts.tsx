// Settings → Remote hosts: the studio's hosts over SSH (and Slurm login
// hosts), added and checked through the same app layer as `trainbench host`.
import { useEffect, useState } from "preact/hooks";
import { api, call, type RemoteHost } from "../api";
import { emptyHostForm, hostAddress, hostSummary, toAddHost, type HostForm } from "../lib/hosts";
import { Confirm, ErrorBox } from "./common";
import { HostSteps } from "./SearchProgress";

interface FormProps {
  form: HostForm;
  set: (p: Partial<HostForm>) => void;
  busy: string | null;
  onAdd: () => void;
  onCancel: () => void;
}

/** A new host: its name, address, interpreters, variables and, for several nodes, its peers or Slurm partition. */
function AddHostForm({ form, set, busy, onAdd, onCancel }: FormProps) {
  return (
    <form
      class="host-form"
      onSubmit={(e) => {
        e.preventDefault();
        onAdd();
      }}
    >
      <label>
        Name
        <input name="host_name" value={form.name} onInput={(e) => set({ name: e.currentTarget.value })} placeholder="gpu1" />
      </label>
      <label>
        Address
        <input name="host_url" value={form.url} onInput={(e) => set({ url: e.currentTarget.value })} placeholder="ssh://me@gpu1.example.org:22/scratch/trainbench or ray://head:8265" />
      </label>
      <label>
        Python interpreters
        <input name="host_pythons" value={form.pythons} onInput={(e) => set({ pythons: e.currentTarget.value })} placeholder="python3" />
      </label>
      <label>
        Variables (KEY=VALUE per line)
        <textarea name="host_env" value={form.env} onInput={(e) => set({ env: e.currentTarget.value })} />
      </label>
      <label class="inline">
        <input type="checkbox" name="host_slurm" checked={form.slurm} onChange={(e) => set({ slurm: e.currentTarget.checked })} /> Slurm login host (runs go through sbatch; several nodes possible)
      </label>
      {!form.slurm && (
        <label>
          Peers for several nodes (ssh:// per line; reached from the host)
          <textarea name="host_peers" value={form.peers} onInput={(e) => set({ peers: e.currentTarget.value })} />
        </label>
      )}
      {form.slurm && (
        <label>
          Partition
          <input name="host_partition" value={form.partition} onInput={(e) => set({ partition: e.currentTarget.value })} placeholder="the default" />
        </label>
      )}
      <button type="submit" class="primary" disabled={busy !== null}>
        {busy === "adding" ? "Connecting…" : "Add and check"}
      </button>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}

interface TableProps {
  hosts: RemoteHost[];
  busy: string | null;
  onCheck: (name: string) => void;
  onRemove: (name: string) => void;
}

/** The hosts, what their last check found, Check and Remove. */
function HostTable({ hosts, busy, onCheck, onRemove }: TableProps) {
  return (
    <table>
      <thead>
        <tr>
          <th>Name</th>
          <th>Address</th>
          <th>What the last check found</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {hosts.length === 0 && (
          <tr>
            <td colSpan={4} class="missing">
              no remote hosts
            </td>
          </tr>
        )}
        {hosts.map((h) => (
          <tr key={h.name}>
            <td>{h.name}</td>
            <td>
              <code>{hostAddress(h.url)}</code>
            </td>
            <td>{hostSummary(h)}</td>
            <td>
              <button type="button" class="small" onClick={() => onCheck(h.name)} disabled={busy !== null}>
                {busy === h.name ? "Checking…" : "Check"}
              </button>
              <button type="button" class="small" data-remove={h.name} onClick={() => onRemove(h.name)} disabled={busy !== null}>
                Remove
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function Hosts() {
  const [hosts, setHosts] = useState<RemoteHost[]>([]);
  const [form, setForm] = useState<HostForm | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    call(api.listHosts()).then(setHosts).catch(setError);
  }, []);
  const set = (p: Partial<HostForm>) => setForm((f) => (f ? { ...f, ...p } : f));

  async function add() {
    if (!form) return;
    setBusy("adding");
    try {
      await call(api.addHost(toAddHost(form)));
      setHosts(await call(api.listHosts()));
      setForm(null);
      setError(null);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  }

  async function check(name: string) {
    setBusy(name);
    try {
      await call(api.checkHost(name));
      setHosts(await call(api.listHosts()));
      setError(null);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(null);
    }
  }

  const [removing, setRemoving] = useState<string | null>(null);
  async function remove(name: string) {
    setRemoving(null);
    try {
      setHosts(await call(api.removeHost(name)));
    } catch (e) {
      setError(e);
    }
  }

  return (
    <section class="hosts">
      <h3>Remote hosts</h3>
      <ErrorBox error={error} onClose={() => setError(null)} />
      {removing !== null && (
        <Confirm
          text={`Remove ${removing} from the host list? Its runs stay in the database; the studio's folder on that host is left as it is.`}
          yes="Remove host"
          onYes={() => remove(removing)}
          onNo={() => setRemoving(null)}
        />
      )}
      <p class="hint">
        GPU servers and Slurm login hosts reached with your <code>ssh</code> (keys, agent, <code>~/.ssh/config</code> and ProxyJump apply). Adding one copies the studio's kit there and
        checks its frameworks and GPUs; “New benchmark” can then run there.
      </p>
      <button type="button" onClick={() => setForm(emptyHostForm())} disabled={form !== null}>
        Add a host
      </button>
      {form && <AddHostForm form={form} set={set} busy={busy} onAdd={add} onCancel={() => setForm(null)} />}
      {busy !== null && <HostSteps />}
      <HostTable hosts={hosts} busy={busy} onCheck={check} onRemove={setRemoving} />
    </section>
  );
}
