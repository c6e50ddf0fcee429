// The wizard's first row: precisions, compile modes and device counts.
import type { AppInfo } from "../../api";
import { Explained } from "../Glossary";
import { FieldMessages, type SectionProps, toggle } from "./fields";

export function PrecisionSection({ precisions, form, set, messages }: SectionProps & { precisions: AppInfo["precisions"] }) {
  return (
    <section>
      <h3>Precision</h3>
      {precisions.map((p) => (
        <label key={p} class="inline">
          <input type="checkbox" name="precision" value={p} checked={form.precisions.includes(p)} onChange={() => set({ precisions: toggle(form.precisions, p) })} />
          <Explained k={p}>{p}</Explained>
        </label>
      ))}
      <FieldMessages field="precision" messages={messages} />
    </section>
  );
}

export function CompileSection({ modes, form, set, messages }: SectionProps & { modes: AppInfo["compile_modes"] }) {
  return (
    <section>
      <h3>Compile</h3>
      {modes.map((c) => (
        <label key={c} class="inline">
          <input type="checkbox" name="compile" value={c} checked={form.compile.includes(c)} onChange={() => set({ compile: toggle(form.compile, c) })} />
          <Explained k={`compile:${c}`}>{c}</Explained>
        </label>
      ))}
      <FieldMessages field="compile" messages={messages} />
    </section>
  );
}

export function DevicesSection({ machine, form, set, messages }: SectionProps & { machine: AppInfo["machine"] }) {
  const gpus = machine.gpus;
  const maxDevices = gpus.length > 0 ? gpus.length : Math.max(1, machine.cpu_cores);
  return (
    <section>
      <h3>Devices</h3>
      <p class="hint">
        {gpus.length > 0
          ? gpus.map((g) => `GPU ${g.index}: ${g.name}${g.memory_total_bytes ? `, ${(g.memory_total_bytes / 2 ** 30).toFixed(0)} GiB` : ""}`).join("; ")
          : `CPU, ${machine.cpu_cores} cores${machine.gpu_unavailable ? ` (${machine.gpu_unavailable})` : ""}`}
      </p>
      {Array.from({ length: Math.min(8, maxDevices) }, (_, i) => i + 1).map((n) => (
        <label key={n} class="inline">
          <input type="checkbox" name="devices" value={n} checked={form.devices.includes(n)} onChange={() => set({ devices: toggle(form.devices, n).sort((a, b) => a - b) })} />
          {n}
        </label>
      ))}
      <FieldMessages field="devices" messages={messages} />
    </section>
  );
}
