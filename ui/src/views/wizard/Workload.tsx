// The wizard's second row: batch size, memory limit, where it runs, the
// data (an image folder's path and loaders among them) and the length.
import { open } from "@tauri-apps/plugin-dialog";
import type { AppInfo, RemoteHost } from "../../api";
import { hostSummary } from "../../lib/hosts";
import { FieldMessages, type SectionProps } from "./fields";

/** Whether a run there may span several machines: a Slurm cluster, or a host with peers. */
function multiNode(h: RemoteHost | undefined): boolean {
  return !!h && (!!h.slurm || (h.peers ?? []).length > 0);
}

export function BatchSection({ form, set, messages }: SectionProps) {
  return (
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
  );
}

export function MemoryLimitSection({ form, set, messages }: SectionProps) {
  return (
    <section>
      <h3>
        <label for="memory-limit">Memory limit</label>
      </h3>
      <input id="memory-limit" name="memory_limit" value={form.memoryLimit} onInput={(e) => set({ memoryLimit: e.currentTarget.value })} placeholder="none, or 8G" />
      <p class="hint">Resident memory a worker may use; one over it is stopped as out of memory.</p>
      <FieldMessages field="memory_limit" messages={messages} />
    </section>
  );
}

export function RunOnSection({ hosts, form, set, messages }: SectionProps & { hosts: RemoteHost[] }) {
  return (
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
  );
}

function FolderFields({ form, set, messages }: SectionProps) {
  return (
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
  );
}

export function DataSection({ sources, form, set, messages }: SectionProps & { sources: AppInfo["data_sources"] }) {
  return (
    <section>
      <h3>
        <label for="data">Data</label>
      </h3>
      <select id="data" name="data" value={form.data} onChange={(e) => set({ data: e.currentTarget.value })}>
        {sources.map((d) => (
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
      {form.data === "folder" && <FolderFields form={form} set={set} messages={messages} />}
      <FieldMessages field="data" messages={messages} />
    </section>
  );
}

export function LengthSection({ form, set, messages }: SectionProps) {
  return (
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
  );
}
