// New benchmark: choose models, frameworks, precisions, devices … Several
// values make a sweep; the backend's verdict (the same rules as the CLI's)
// shows the run count and flags combinations that cannot run, per field.
import { useEffect, useMemo, useState } from "preact/hooks";
import { Channel } from "@tauri-apps/api/core";
import { open } from "@tauri-apps/plugin-dialog";
import { api, call, type AppInfo, type InstallProgress, type InstallUpdateDto, type PlanDto, type ReleaseInstallDto, type ReleasesMadeDto, type RemoteHost, type SweepRequest } from "../api";
import { installView } from "../lib/install";
import { budgetNotices } from "../lib/releases";
import { hostSummary } from "../lib/hosts";
import { count, flops } from "../lib/format";
import { canStart, defaultForm, messagesByField, planText, startLabel, toRequest, type FieldError, type WizardForm } from "../lib/sweep";
import { ErrorBox } from "./common";
import { Explained } from "./Glossary";
import { SearchProgress } from "./SearchProgress";
import { ReleasePicker } from "./ReleasePicker";
import { BisectPanel } from "./BisectPanel";
import { useKeydown } from "../lib/keys";

interface Props {
  info: AppInfo;
  /** The runs queued, and sentences for the queue to show (releases removed
   * over the disk budget by Start's installs, or kept over it in use). */
  onStarted: (runIds: number[], notices: string[]) => void;
  onInfoChanged: () => void;
}

/** Whether a run there may span several machines: a Slurm cluster, or a host with peers. */
function multiNode(h: RemoteHost | undefined): boolean {
  return !!h && (!!h.slurm || (h.peers ?? []).length > 0);
}

function toggle<T>(list: T[], v: T): T[] {
  return list.includes(v) ? list.filter((x) => x !== v) : [...list, v];
}

export function FieldMessages({ field, messages }: { field: string; messages: Map<string, string[]> }) {
  const list = messages.get(field);
  if (!list || list.length === 0) return null;
  return (
    <ul class="field-errors" data-field={field}>
      {list.map((m) => (
        <li key={m}>{m}</li>
      ))}
    </ul>
  );
}

const SHOWN = ["model", "framework", "precision", "compile", "devices", "batch_size", "data", "steps", "epochs", "target_accuracy", "target_loss", "repeats", "price", "epoch_size", "profile"];

/** Verdicts on settings the wizard has no field for. */
function OtherMessages({ messages }: { messages: Map<string, string[]> }) {
  const rest = [...messages.entries()].filter(([f]) => !SHOWN.includes(f));
  if (rest.length === 0) return null;
  return (
    <ul class="field-errors">
      {rest.flatMap(([f, list]) => list.map((m) => <li key={f + m}>{m}</li>))}
    </ul>
  );
}

export function PlanSummary({ plan, parseError }: { plan: PlanDto | null; parseError: FieldError | null }) {
  if (parseError) return <p class="plan bad" data-plan="invalid">{parseError.message}</p>;
  if (!plan) return <p class="plan">Checking…</p>;
  return (
    <div class="plan" data-plan={plan.runs}>
      <p>
        <strong>{planText(plan)}</strong>
      </p>
      {plan.configurations.length > 0 && (
        <details>
          <summary>Configurations</summary>
          <ul>
            {plan.configurations.map((c) => (
              <li key={c}>{c}</li>
            ))}
          </ul>
        </details>
      )}
      {plan.runs > 0 && (
        <p class="hint" id="plan-duration" title="Each configuration's latest earlier run here: its time outside the steady windows plus the planned samples at its steady throughput.">
          {plan.duration ? `Estimated duration: ${plan.duration.text}.` : "No duration estimate: none of these configurations has run on this machine yet."}
        </p>
      )}
      {plan.notes.map((n) => (
        <p key={n} class="hint warn plan-note">
          {n}
        </p>
      ))}
    </div>
  );
}

function InstallFigures({ progress }: { progress: InstallProgress }) {
  const v = installView(progress);
  return (
    <div class="install-figures">
      <div>{v.step}</div>
      <div>Packages: {v.packages}</div>
      <div>Downloads: {v.downloads}</div>
      {v.fraction !== null && (
        <div class="progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(v.fraction * 100)}>
          <div style={{ width: `${(v.fraction * 100).toFixed(1)}%` }} />
        </div>
      )}
    </div>
  );
}

export function Wizard({ info, onStarted, onInfoChanged }: Props) {
  const [form, setForm] = useState<WizardForm>(defaultForm);
  const [plan, setPlan] = useState<PlanDto | null>(null);
  const [hosts, setHosts] = useState<RemoteHost[]>([]);
  useEffect(() => {
    call(api.listHosts()).then(setHosts).catch(() => setHosts([]));
  }, []);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [installing, setInstalling] = useState<{ framework: string; lines: string[]; progress: InstallProgress | null } | null>(null);
  const set = (patch: Partial<WizardForm>) => setForm((f) => ({ ...f, ...patch }));

  const parsed = useMemo(() => toRequest(form), [form]);
  const parseError = "field" in parsed && "message" in parsed && !("model" in parsed) ? (parsed as FieldError) : null;

  useEffect(() => {
    if (parseError) {
      setPlan(null);
      return;
    }
    let stale = false;
    const t = setTimeout(() => {
      call(api.plan(parsed as Parameters<typeof api.plan>[0]))
        .then((p) => {
          if (stale) return;
          setPlan(p);
          setError(null);
        })
        .catch((e) => !stale && setError(e));
    }, 150);
    return () => {
      stale = true;
      clearTimeout(t);
    };
  }, [JSON.stringify(parsed)]);

  const messages = useMemo(() => messagesByField(plan?.rejected ?? []), [plan]);
  const gpus = info.machine.gpus;
  const maxDevices = gpus.length > 0 ? gpus.length : Math.max(1, info.machine.cpu_cores);

  async function start() {
    if (parseError) return;
    setBusy(true);
    setError(null);
    try {
      const request = parsed as SweepRequest;
      // Releases ticked and not installed: made first, shown as an install;
      // the ones removed over the disk budget, and the ones kept over it
      // because something uses them, are said in the queue.
      let budget: string[] = [];
      if ((plan?.to_install ?? []).length > 0) {
        const made = await installReleases(request.framework);
        if (made === null) return;
        budget = budgetNotices(made);
      }
      const started = await call(api.startSweep(request as Parameters<typeof api.startSweep>[0], true));
      onStarted(started.run_ids, budget);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }

  /** Makes the sweep's missing releases with the install panel's lines and
   * Cancel; null when it failed or was cancelled (the error is shown). */
  async function installReleases(frameworks: string[]): Promise<ReleasesMadeDto | null> {
    const lines: string[] = [];
    const ch = new Channel<ReleaseInstallDto>();
    ch.onmessage = (u) => {
      lines.push(`${u.release}: ${u.line}`);
      setInstalling({ framework: u.release, lines: lines.slice(-30), progress: u.progress });
    };
    try {
      const made = await call(api.installReleases(frameworks, ch));
      onInfoChanged();
      return made;
    } catch (e) {
      setError(e);
      return null;
    } finally {
      setInstalling(null);
    }
  }

  // Ctrl+Enter (⌘+Enter) starts, as the Start button would.
  useKeydown((e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && !busy && parseError === null && canStart(plan)) {
      e.preventDefault();
      start();
    }
  });

  async function install(framework: string) {
    const lines: string[] = [];
    let progress: InstallProgress | null = null;
    setInstalling({ framework, lines, progress });
    setError(null);
    const ch = new Channel<InstallUpdateDto>();
    ch.onmessage = (u) => {
      lines.push(u.line);
      progress = u.progress;
      setInstalling({ framework, lines: lines.slice(-30), progress });
    };
    try {
      await call(api.installFramework(framework, ch));
      onInfoChanged();
    } catch (e) {
      // pip's (or uv's) reason is in the message; a cancel says so.
      setError(e);
    } finally {
      setInstalling(null);
    }
  }

  async function cancelInstall() {
    if (!installing) return;
    try {
      await call(api.cancelInstall(installing.framework));
    } catch (e) {
      setError(e);
    }
  }

  return (
    <div class="view wizard">
      <h2>New benchmark</h2>
      <section>
        <h3>Model</h3>
        <table class="choices" data-field="model">
          <thead>
            <tr>
              <th />
              <th>Model</th>
              <th>Parameters</th>
              <th>Training FLOPs / sample</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {info.models.map((m) => (
              <tr key={m.name}>
                <td>
                  <input
                    type="checkbox"
                    id={`model-${m.name}`}
                    checked={form.models.includes(m.name)}
                    onChange={() => set({ models: toggle(form.models, m.name) })}
                  />
                </td>
                <td>
                  <label for={`model-${m.name}`} title={m.summary}>
                    {m.name}
                  </label>
                </td>
                <td class="num">{count(m.param_count)}</td>
                <td class="num">{m.flops_per_sample === null ? "not known" : flops(m.flops_per_sample)}</td>
                <td class="hint">{m.cpu_friendly ? "trains on a CPU" : "needs a GPU"}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <FieldMessages field="model" messages={messages} />
      </section>

      <section>
        <h3>Framework</h3>
        <ul class="choices" data-field="framework">
          {info.frameworks.map((f) => (
            <li key={f.key}>
              <label>
                <input
                  type="checkbox"
                  name="framework"
                  value={f.key}
                  disabled={!f.installed}
                  checked={form.frameworks.includes(f.key)}
                  onChange={() => set({ frameworks: toggle(form.frameworks, f.key) })}
                />
                <Explained k={f.framework}>{f.title}</Explained> {f.version ? <span class="hint">{f.version}</span> : null}
              </label>
              {f.problem && <span class="hint warn"> — {f.problem}</span>}
              {!f.installed && f.installable && (
                <button type="button" class="small" disabled={installing !== null} onClick={() => install(f.framework)}>
                  Install
                </button>
              )}
              {f.key === f.framework && f.framework !== "tch" && (
                <ReleasePicker
                  framework={f.framework}
                  chosen={form.frameworks}
                  onToggle={(key) => set({ frameworks: toggle(form.frameworks, key) })}
                  onInstall={install}
                  installing={installing !== null}
                />
              )}
            </li>
          ))}
        </ul>
        {installing && (
          <div class="install-log" data-framework={installing.framework}>
            <p>
              Installing {installing.framework} from PyPI…{" "}
              <button type="button" class="small" onClick={cancelInstall}>
                Cancel install
              </button>
            </p>
            {installing.progress && <InstallFigures progress={installing.progress} />}
            <pre>{installing.lines.join("\n")}</pre>
          </div>
        )}
        <FieldMessages field="framework" messages={messages} />
      </section>

      <div class="row">
        <section>
          <h3>Precision</h3>
          {info.precisions.map((p) => (
            <label key={p} class="inline">
              <input type="checkbox" name="precision" value={p} checked={form.precisions.includes(p)} onChange={() => set({ precisions: toggle(form.precisions, p) })} />
              <Explained k={p}>{p}</Explained>
            </label>
          ))}
          <FieldMessages field="precision" messages={messages} />
        </section>
        <section>
          <h3>Compile</h3>
          {info.compile_modes.map((c) => (
            <label key={c} class="inline">
              <input type="checkbox" name="compile" value={c} checked={form.compile.includes(c)} onChange={() => set({ compile: toggle(form.compile, c) })} />
              <Explained k={`compile:${c}`}>{c}</Explained>
            </label>
          ))}
          <FieldMessages field="compile" messages={messages} />
        </section>
        <section>
          <h3>Devices</h3>
          <p class="hint">
            {gpus.length > 0
              ? gpus.map((g) => `GPU ${g.index}: ${g.name}${g.memory_total_bytes ? `, ${(g.memory_total_bytes / 2 ** 30).toFixed(0)} GiB` : ""}`).join("; ")
              : `CPU, ${info.machine.cpu_cores} cores${info.machine.gpu_unavailable ? ` (${info.machine.gpu_unavailable})` : ""}`}
          </p>
          {Array.from({ length: Math.min(8, maxDevices) }, (_, i) => i + 1).map((n) => (
            <label key={n} class="inline">
              <input type="checkbox" name="devices" value={n} checked={form.devices.includes(n)} onChange={() => set({ devices: toggle(form.devices, n).sort((a, b) => a - b) })} />
              {n}
            </label>
          ))}
          <FieldMessages field="devices" messages={messages} />
        </section>
      </div>

      <div class="row">
        <section>
          <h3>
            <label for="batch">Batch size</label>
          </h3>
          <input id="batch" name="batch_size" value={form.batchSizes} onInput={(e) => set({ batchSizes: e.currentTarget.value })} placeholder="64 or 32, 64, 128 or max" />
          <p class="hint">
            <code>max</code>: the largest power of two that fits, each probe a short run in a fresh worker (on the CPU, within the memory limit).
          </p>
          <FieldMessages field="batch_size" messages={messages} />
        </section>
        <section>
          <h3>
            <label for="memory-limit">Memory limit</label>
          </h3>
          <input id="memory-limit" name="memory_limit" value={form.memoryLimit} onInput={(e) => set({ memoryLimit: e.currentTarget.value })} placeholder="none, or 8G" />
          <p class="hint">Resident memory a worker may use; one over it is stopped as out of memory.</p>
          <FieldMessages field="memory_limit" messages={messages} />
        </section>
        <section>
          <h3>
            <label for="run-on">Run on</label>
          </h3>
          <select id="run-on" name="host" value={form.host} onChange={(e) => set({ host: e.currentTarget.value, nodes: "" })}>
            <option value="">this machine</option>
            {hosts.map((h) => (
              <option key={h.name} value={h.name}>
                {h.name} — {hostSummary(h)}
              </option>
            ))}
          </select>
          {multiNode(hosts.find((h) => h.name === form.host)) && (
            <label>
              Nodes
              <input name="nodes" value={form.nodes} onInput={(e) => set({ nodes: e.currentTarget.value })} placeholder="1" />
            </label>
          )}
          <p class="hint">Remote hosts are added in Settings; runs there are stored here with the host's provenance.</p>
          <FieldMessages field="host" messages={messages} />
          <FieldMessages field="nodes" messages={messages} />
        </section>
        <section>
          <h3>
            <label for="data">Data</label>
          </h3>
          <select id="data" name="data" value={form.data} onChange={(e) => set({ data: e.currentTarget.value })}>
            {info.data_sources.map((d) => (
              <option key={d} value={d}>
                {d === "mnist"
                  ? "MNIST sample (5,000 real images)"
                  : d === "text"
                    ? "text (Python's help text as byte tokens; decoder models)"
                    : d === "folder"
                      ? "image folder (JPEG/PNG decoded while training runs)"
                      : "synthetic (random tensors)"}
              </option>
            ))}
          </select>
          <label for="image-size">Image size (px)</label>
          <input id="image-size" name="image_size" value={form.imageSize} onInput={(e) => set({ imageSize: e.currentTarget.value })} placeholder="the model's (224)" />
          <p class="hint">Pixels per side of an image model's input (a ViT takes a multiple of its patch, a ResNet 32 or more); FLOPs and MFU follow it.</p>
          <FieldMessages field="image_size" messages={messages} />
          {form.data === "folder" && (
            <div class="folder">
              <label for="folder-path">Image folder</label>
              <input id="folder-path" name="folder_path" value={form.folderPath} onInput={(e) => set({ folderPath: e.currentTarget.value })} placeholder="/data/imagenet-subset" />
              <button type="button" onClick={async () => {
                const path = await open({ title: "Choose an image folder", directory: true, multiple: false });
                if (typeof path === "string") set({ folderPath: path });
              }}>Choose…</button>
              <label for="loader-workers">Loader workers</label>
              <input id="loader-workers" name="loader_workers" value={form.loaderWorkers} onInput={(e) => set({ loaderWorkers: e.currentTarget.value })} placeholder="2" />
              <p class="hint">train/&lt;class&gt;/ and val/&lt;class&gt;/ (or &lt;class&gt;/, every tenth image held out). Workers decode and augment on the host while the model trains: DataLoader processes, tf.data parallel calls, JAX decoding threads; 0 decodes on the training thread. The libtorch worker (tch) has no folder loader.</p>
              <FieldMessages field="loader_workers" messages={messages} />
              <FieldMessages field="num_classes" messages={messages} />
            </div>
          )}
          <FieldMessages field="data" messages={messages} />
        </section>
        <section>
          <h3>Length</h3>
          <label class="inline">
            <input type="radio" name="length" checked={form.length === "steps"} onChange={() => set({ length: "steps" })} /> steps
          </label>
          <label class="inline">
            <input type="radio" name="length" checked={form.length === "epochs"} onChange={() => set({ length: "epochs" })} /> epochs
          </label>
          {form.length === "steps" ? (
            <input name="steps" value={form.steps} onInput={(e) => set({ steps: e.currentTarget.value })} />
          ) : (
            <input name="epochs" value={form.epochs} onInput={(e) => set({ epochs: e.currentTarget.value })} />
          )}
          <FieldMessages field="steps" messages={messages} />
          <FieldMessages field="epochs" messages={messages} />
        </section>
      </div>

      <div class="row">
        <section>
          <h3>
            <label for="target">Target accuracy</label>
          </h3>
          <input id="target" name="target_accuracy" value={form.targetAccuracy} placeholder="none, or 0.95" onInput={(e) => set({ targetAccuracy: e.currentTarget.value })} />
          <p class="hint">
            Held-out accuracy to reach (<Explained k="time-to-accuracy">time to accuracy</Explained>); the run stops there.
          </p>
          <FieldMessages field="target_accuracy" messages={messages} />
        </section>
        <section>
          <h3>
            <label for="target-loss">Target loss</label>
          </h3>
          <input id="target-loss" name="target_loss" value={form.targetLoss} placeholder="none, or 3.5" onInput={(e) => set({ targetLoss: e.currentTarget.value })} />
          <p class="hint">Or a held-out loss to reach, for text models (time to loss).</p>
          <FieldMessages field="target_loss" messages={messages} />
        </section>
        <section>
          <h3>
            <label for="repeats">Repeats</label>
          </h3>
          <input id="repeats" name="repeats" value={form.repeats} onInput={(e) => set({ repeats: e.currentTarget.value })} />
          <FieldMessages field="repeats" messages={messages} />
        </section>
        <section>
          <h3>
            <label for="threads">CPU threads</label>
          </h3>
          <input id="threads" name="threads" value={form.threads} placeholder="the framework's choice, or 1, 2, 4" onInput={(e) => set({ threads: e.currentTarget.value })} />
          <p class="hint">Threads each framework may use for its operators on the CPU. Several (1, 2, 4) compare them: each count is its own configuration.</p>
          <FieldMessages field="threads" messages={messages} />
        </section>
        <section>
          <h3>
            <label for="cudnn-benchmark">cuDNN benchmark mode</label>
          </h3>
          <select id="cudnn-benchmark" name="cudnn_benchmark" value={form.cudnnBenchmark} onChange={(e) => set({ cudnnBenchmark: e.currentTarget.value as WizardForm["cudnnBenchmark"] })}>
            <option value="">the worker's default (on for a convolutional network)</option>
            <option value="on">on</option>
            <option value="off">off</option>
            <option value="both">compare on and off</option>
          </select>
          <p class="hint">PyTorch and the libtorch worker on a GPU: with it on, cuDNN times its algorithms for each convolution's shape in the first steps and keeps the fastest (torch.backends.cudnn.benchmark).</p>
          <FieldMessages field="cudnn_benchmark" messages={messages} />
        </section>
        <section>
          <h3>
            <label for="env-alternatives">Environment variables to compare</label>
          </h3>
          <textarea
            id="env-alternatives"
            name="env"
            rows={3}
            value={form.envAlternatives}
            placeholder={"none set, or one alternative per line:\nXLA_FLAGS=--xla_cpu_multi_thread_eigen=false\ndefault"}
            onInput={(e) => set({ envAlternatives: e.currentTarget.value })}
          />
          <p class="hint">
            Settings people A/B, as environment variables of the worker: each line is one alternative (NAME=VALUE, several joined by ;), and <code>default</code> sets none. Only the frameworks' own
            families (XLA_…, TF_ENABLE_…, TF_XLA_…, JAX_…, PYTORCH_…, TORCH_…, CUDNN_…, NCCL_…, ONEDNN_…). Each run states in its provenance which of them its worker saw.
          </p>
          <FieldMessages field="env" messages={messages} />
        </section>
        <section>
          <h3>Operator profile</h3>
          <label>
            <input
              type="checkbox"
              id="profile"
              name="profile"
              checked={form.profile}
              onChange={(e) => set({ profile: e.currentTarget.checked })}
            />{" "}
            profile a few steps after the timed part under each framework's own profiler: top operators and categories by self time
          </label>
          <FieldMessages field="profile" messages={messages} />
        </section>
        <section>
          <h3>
            <label for="price">Price</label>
          </h3>
          <select id="price" name="price" value={form.price} onChange={(e) => set({ price: e.currentTarget.value })}>
            <option value="">none (no cost per epoch)</option>
            {info.prices.map((p) => (
              <option key={p.offering} value={p.offering}>
                {p.offering} — ${(p.usd_per_hour ?? 0).toFixed(2)}/h ({p.as_of})
              </option>
            ))}
          </select>
          <FieldMessages field="price" messages={messages} />
          {form.price !== "" && form.data === "synthetic" && (
            <label class="epoch-size">
              Epoch size (samples){" "}
              <input
                id="epoch-size"
                name="epoch_size"
                inputmode="numeric"
                placeholder="ImageNet-1k: 1281167"
                value={form.epochSize}
                onInput={(e) => set({ epochSize: e.currentTarget.value })}
              />
              <span class="hint">
                Synthetic data has no size of its own: cost per epoch is projected for this many samples at the measured throughput. Left empty, an image
                model is priced for ImageNet-1k's 1,281,167 training images and a text model gets no cost per epoch. A real data set is priced for its own
                size.
              </span>
            </label>
          )}
          <FieldMessages field="epoch_size" messages={messages} />
        </section>
      </div>

      <footer class="start">
        <PlanSummary plan={plan} parseError={parseError} />
        <OtherMessages messages={messages} />
        <ErrorBox error={error} onClose={() => setError(null)} />
        {busy && "batch_max" in parsed && parsed.batch_max && <SearchProgress />}
        <button type="button" class="primary" id="start" title="Ctrl+Enter" disabled={busy || parseError !== null || !canStart(plan)} onClick={start}>
          {startLabel(plan)}
        </button>
      </footer>
      <BisectPanel base={parseError ? null : (parsed as SweepRequest)} />
    </div>
  );
}
