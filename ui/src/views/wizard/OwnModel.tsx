// "Your model": a model from timm, Hugging Face transformers or
// keras.applications, named with matching names listed as it is typed, or a
// function of a Python file; checked (built once by its framework's worker
// and counted, nothing trains) and added to the models the runs train.
import { open } from "@tauri-apps/plugin-dialog";
import { useState } from "preact/hooks";
import { count, flops } from "../../lib/format";
import { fileReference, inputText, libraryReference, ownModels, takesTokens, trainedAs } from "../../lib/ownModel";
import { Explained } from "../Glossary";
import { FieldMessages, type SectionProps } from "./fields";
import { type Checked, useCheck, useModelSearch } from "./useOwnModel";

/** At most this many matching names are listed. */
const LISTED = 12;

export function OwnModelBlock({ catalogue, form, set, messages }: SectionProps & { catalogue: string[] }) {
  const [kind, setKind] = useState<"library" | "file">("library");
  const [name, setName] = useState("");
  const [path, setPath] = useState("");
  const [fn, setFn] = useState("build");
  const checks = useCheck();
  const reference = kind === "library" ? libraryReference(name) : fileReference(path, fn);
  const changed = (f: () => void) => {
    f();
    checks.clear();
  };
  const added = typeof reference === "string" && form.models.includes(reference);
  return (
    <div class="own-model">
      <h4>Your model</h4>
      <OwnModelRows own={ownModels(form.models, catalogue)} onRemove={(m) => set({ models: form.models.filter((x) => x !== m) })} />
      <label class="inline">
        <input type="radio" name="own_kind" checked={kind === "library"} onChange={() => changed(() => setKind("library"))} /> a library name
      </label>
      <label class="inline">
        <input type="radio" name="own_kind" checked={kind === "file"} onChange={() => changed(() => setKind("file"))} /> a model file
      </label>
      {kind === "library" ? (
        <LibraryName value={name} onChange={(v) => changed(() => setName(v))} />
      ) : (
        <ModelFile path={path} fn={fn} onPath={(v) => changed(() => setPath(v))} onFn={(v) => changed(() => setFn(v))} />
      )}
      <ModelInputs file={kind === "file"} form={form} set={set} messages={messages} />
      <div class="own-actions">
        <button type="button" id="own-check" disabled={checks.checking} onClick={() => checks.check(form, reference)}>
          {checks.checking ? "Checking…" : "Check"}
        </button>
        <button type="button" id="own-add" disabled={typeof reference !== "string" || added} onClick={() => typeof reference === "string" && set({ models: [...form.models, reference] })}>
          {added ? "Added" : "Add"}
        </button>
        <span class="hint">Check builds the model in each framework chosen below and counts it; Add puts it beside the models ticked above.</span>
      </div>
      <CheckResults results={checks.results} />
    </div>
  );
}

/** The own models the runs will train, each removable. */
export function OwnModelRows({ own, onRemove }: { own: string[]; onRemove: (model: string) => void }) {
  if (own.length === 0) return null;
  return (
    <table class="own-models">
      <tbody>
        {own.map((m) => (
          <tr key={m} data-model={m}>
            <td>
              <code>{m}</code>
            </td>
            <td>
              <button type="button" onClick={() => onRemove(m)} aria-label={`Remove ${m}`}>
                Remove
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function LibraryName({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const found = useModelSearch(value);
  return (
    <div class="library-name">
      <label for="own-library">Library name</label>
      <input id="own-library" name="own_library" value={value} autocomplete="off" onInput={(e) => onChange(e.currentTarget.value)} placeholder="timm:resnet18, hf:bert, keras:ResNet50" />
      {found.searching && <span class="hint"> searching…</span>}
      {found.names.length > 0 && (
        <ul class="suggestions">
          {found.names.slice(0, LISTED).map((n) => (
            <li key={n}>
              <button type="button" onClick={() => onChange(n)}>
                {n}
              </button>
            </li>
          ))}
        </ul>
      )}
      {found.names.length > LISTED && <p class="hint">{found.names.length - LISTED} more: type more of the name.</p>}
      {found.note && <p class="hint">{found.note}</p>}
      <p class="hint">
        A model from timm (<code>timm:resnet18</code>) or Hugging Face transformers (<code>hf:llama?hidden_size=64&amp;num_hidden_layers=2</code>: a model type, with its configuration changed after <code>?</code>), trained in PyTorch, or
        from keras.applications (<code>keras:ResNet50</code>), trained in TensorFlow. Built without pretrained weights: nothing is downloaded.
      </p>
    </div>
  );
}

function ModelFile({ path, fn, onPath, onFn }: { path: string; fn: string; onPath: (v: string) => void; onFn: (v: string) => void }) {
  return (
    <div class="model-file">
      <label for="own-file">Model file</label>
      <input id="own-file" name="own_file" value={path} onInput={(e) => onPath(e.currentTarget.value)} placeholder="/home/me/mymodel.py" />
      <button type="button" onClick={async () => {
        const chosen = await open({ title: "Choose a model file", directory: false, multiple: false, filters: [{ name: "Python", extensions: ["py"] }] });
        if (typeof chosen === "string") onPath(chosen);
      }}>Choose…</button>
      <label for="own-function">Function</label>
      <input id="own-function" name="own_function" value={fn} onInput={(e) => onFn(e.currentTarget.value)} placeholder="build" />
      <p class="hint">
        A Python file with a function that returns the model: a PyTorch <code>nn.Module</code>, a <code>keras.Model</code> or a Flax <code>linen.Module</code>, for the framework chosen below. Its code runs only when you press
        Check or start the runs; each run keeps the file's SHA-256 and a copy of it.
      </p>
    </div>
  );
}

/** The input a model file takes (shown while a file is chosen, or while
 * something is typed in them) and the classes any model predicts. */
function ModelInputs({ file, form, set, messages }: SectionProps & { file: boolean }) {
  const shape = file || form.inputShape !== "" || form.vocabSize !== "";
  return (
    <div class="own-inputs">
      {shape && (
        <>
          <label for="input-shape">Input shape</label>
          <input id="input-shape" name="input_shape" value={form.inputShape} onInput={(e) => set({ inputShape: e.currentTarget.value })} placeholder="3x32x32 or tokens:128" />
          <FieldMessages field="input_shape" messages={messages} />
          <p class="hint">
            What the model takes: <code>CxSxS</code> images (channels × height × width, square: <code>3x32x32</code>) or <code>tokens:N</code>, N token ids per sequence. One input for every model of the sweep.
          </p>
        </>
      )}
      {shape && (takesTokens(form.inputShape) || form.vocabSize !== "") && (
        <>
          <label for="vocab-size">Vocab size</label>
          <input id="vocab-size" name="vocab_size" value={form.vocabSize} onInput={(e) => set({ vocabSize: e.currentTarget.value })} placeholder="1000" />
          <FieldMessages field="vocab_size" messages={messages} />
          <p class="hint">The range of the token ids (0 to vocab size − 1).</p>
        </>
      )}
      <label for="num-classes">Classes</label>
      <input id="num-classes" name="num_classes" value={form.numClasses} onInput={(e) => set({ numClasses: e.currentTarget.value })} placeholder="the model's own" />
      <FieldMessages field="num_classes" messages={messages} />
      <p class="hint">
        The width of the model's output for images or classified sequences (a model file taking images needs it). Left empty: the model's own (1000 for timm and keras, 2 for a Hugging Face
        encoder), and a model file taking tokens is a language model, predicting each next token.
      </p>
    </div>
  );
}

/** What the last check found: the counts per framework, or the errors under their fields. */
export function CheckResults({ results }: { results: Checked[] | null }) {
  if (results === null) return null;
  const errors = new Map<string, string[]>();
  for (const r of results) {
    if (!r.error) continue;
    const list = errors.get(r.error.field) ?? [];
    list.push(r.framework === "" ? r.error.message : `${r.framework}: ${r.error.message}`);
    errors.set(r.error.field, list);
  }
  const counted = results.filter((r) => r.described !== null);
  return (
    <div class="own-check">
      {counted.length > 0 && (
        <table class="described">
          <thead>
            <tr>
              <th>Framework</th>
              <th>Parameters</th>
              <th>
                <Explained k="flops">Training FLOPs / sample</Explained>
              </th>
              <th>Trained as</th>
            </tr>
          </thead>
          <tbody>
            {counted.map(({ framework, described: d }) =>
              d === null ? null : (
                <tr key={framework} data-framework={framework}>
                  <td>{framework}</td>
                  <td class="num" data-params={d.param_count}>{count(d.param_count)}</td>
                  <td>{d.flops_per_sample === null ? "not counted (MFU not measured)" : `${flops(d.flops_per_sample)} (${d.flops_method ?? "counted"})`}</td>
                  <td>
                    {trainedAs(d.trained_as)}
                    {inputText(d) && `, on ${inputText(d)}`}
                  </td>
                </tr>
              ),
            )}
          </tbody>
        </table>
      )}
      {counted.length > 0 && (
        <p class="hint">
          Parameters: the trainable weights, counted on the model object. Training FLOPs per sample: one forward and backward pass of one sample, as the framework's own counter counts them;
          <Explained k="mfu">MFU</Explained> (the share of the device's peak the training reaches) uses them.
        </p>
      )}
      {[...errors.keys()].map((field) => (
        <FieldMessages key={field} field={field} messages={errors} />
      ))}
    </div>
  );
}
