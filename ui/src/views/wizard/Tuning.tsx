// The wizard's third row, second part: the settings people A/B — CPU
// threads, cuDNN's benchmark mode, environment variables — and the profile.
import type { WizardForm } from "../../lib/sweep";
import { FieldMessages, type SectionProps } from "./fields";

export function ThreadsSection({ form, set, messages }: SectionProps) {
  return (
    <section>
      <h3>
        <label for="threads">CPU threads</label>
      </h3>
      <input id="threads" name="threads" value={form.threads} placeholder="the framework's choice, or 1, 2, 4" onInput={(e) => set({ threads: e.currentTarget.value })} />
      <p class="hint">Threads each framework may use for its operators on the CPU. Several (1, 2, 4) compare them: each count is its own configuration.</p>
      <FieldMessages field="threads" messages={messages} />
    </section>
  );
}

export function CudnnSection({ form, set, messages }: SectionProps) {
  return (
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
  );
}

export function EnvSection({ form, set, messages }: SectionProps) {
  return (
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
  );
}

export function ProfileSection({ form, set, messages }: SectionProps) {
  return (
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
  );
}
