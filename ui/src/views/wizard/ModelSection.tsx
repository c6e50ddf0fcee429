// The wizard's models: one row each, with its size and training FLOPs; then
// a person's own models (library names and model files), added beside them.
import type { AppInfo } from "../../api";
import { count, flops } from "../../lib/format";
import { FieldMessages, type SectionProps, toggle } from "./fields";
import { OwnModelBlock } from "./OwnModel";

export function ModelSection({ models, form, set, messages }: SectionProps & { models: AppInfo["models"] }) {
  return (
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
          {models.map((m) => (
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
      <OwnModelBlock catalogue={models.map((m) => m.name)} form={form} set={set} messages={messages} />
    </section>
  );
}
