// The wizard's models: a search over the catalogue and the installed
// libraries (timm, Hugging Face transformers, keras.applications) with the
// family, size and "trains on a CPU" as filters, the catalogue's own models
// first; each row ticked to train it. A person's model file or a library
// model with changed settings is added below (Your model).
import type { AppInfo, FoundModel, SizeClass } from "../../api";
import { count, flops } from "../../lib/format";
import { catalogueRows, cpuText, LISTED, listNotes, narrows, SIZES, sizeText } from "../../lib/modelSearch";
import { FieldMessages, type SectionProps, toggle } from "./fields";
import { OwnModelBlock } from "./OwnModel";
import { useFindModels } from "./useFindModels";

export function ModelSection({ models, form, set, messages }: SectionProps & { models: AppInfo["models"] }) {
  const search = useFindModels();
  const { query } = search;
  const rows: FoundModel[] = search.found && (narrows(query) || search.found.models.length > 0) ? search.found.models : catalogueRows(models);
  const families = search.found?.families ?? [];
  return (
    <section>
      <div class="model-search">
        <input id="model-search" type="search" aria-label="Search models" value={query.text} onInput={(e) => search.set({ text: e.currentTarget.value })} placeholder="Search: resnet, vit, llama, MobileNet…" />
        <select id="model-family" aria-label="Family" value={query.family ?? ""} onChange={(e) => search.set({ family: e.currentTarget.value || null })}>
          <option value="">any family</option>
          {query.family && !families.some((f) => f.family === query.family) && <option value={query.family}>{query.family}</option>}
          {families.map((f) => (
            <option key={f.family} value={f.family}>
              {f.family} ({f.count})
            </option>
          ))}
        </select>
        <select id="model-size" aria-label="Size" value={query.size ?? ""} onChange={(e) => search.set({ size: (e.currentTarget.value || null) as SizeClass | null })}>
          <option value="">any size</option>
          {SIZES.map(([k, label]) => (
            <option key={k} value={k}>
              {label}
            </option>
          ))}
        </select>
        <label class="inline">
          <input type="checkbox" id="model-cpu" checked={query.cpu_only} onChange={(e) => search.set({ cpu_only: e.currentTarget.checked })} /> trains on a CPU
        </label>
        {search.found && search.found.not_counted > 0 && (
          <button type="button" id="model-count" disabled={search.busy !== null} onClick={search.count} title="Builds each model once without its weights (on PyTorch's meta device) and counts its parameters; kept for next time">
            Count the sizes of {search.found.not_counted}
          </button>
        )}
        {search.busy && <span class="hint"> {search.busy}…</span>}
      </div>
      <ModelRows rows={rows.slice(0, LISTED)} chosen={form.models} onToggle={(m) => set({ models: toggle(form.models, m) })} />
      {search.found && listNotes(search.found, query).map((n) => <p class="hint" key={n}>{n}</p>)}
      {search.error && <p class="error">{search.error}</p>}
      <p class="hint">
        Sizes are parameters at each model's defaults. A library model counts as small enough for a CPU at 5 M parameters or fewer; the catalogue's own say so from their
        measured work.
      </p>
      <FieldMessages field="model" messages={messages} />
      <OwnModelBlock catalogue={models.map((m) => m.name)} form={form} set={set} messages={messages} />
    </section>
  );
}

function ModelRows({ rows, chosen, onToggle }: { rows: FoundModel[]; chosen: string[]; onToggle: (model: string) => void }) {
  return (
    <table class="choices" data-field="model">
      <thead>
        <tr>
          <th />
          <th>Model</th>
          <th>Family</th>
          <th>Parameters</th>
          <th>Training FLOPs / sample</th>
          <th />
        </tr>
      </thead>
      <tbody>
        {rows.map((m) => (
          <tr key={m.name} data-model={m.name} data-source={m.source}>
            <td>
              <input type="checkbox" id={m.source === "catalogue" ? `model-${m.name}` : undefined} aria-label={`Train ${m.name}`} checked={chosen.includes(m.name)} onChange={() => onToggle(m.name)} />
            </td>
            <td>
              <span title={m.summary}>{m.name}</span>
              {m.source !== "catalogue" && <span class="hint"> {m.source}</span>}
            </td>
            <td>{m.family}</td>
            <td class="num">{sizeText(m, count)}</td>
            <td class="num">{m.flops_per_sample === null ? "counted when it runs" : flops(m.flops_per_sample)}</td>
            <td class="hint">{cpuText(m)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
