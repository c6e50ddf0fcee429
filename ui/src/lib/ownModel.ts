// A person's own model in the wizard: the reference a run takes (a library
// name, or PATH.py:FUNCTION), its input shape checked as the backend checks
// it, the library names a search found, and what a check found, in words.
import type { DescribedModel, ModelSearch } from "../bindings";

/** A field's problem found before the backend is asked (sweep.ts's FieldError). */
interface FieldError {
  field: string;
  message: string;
}

const LIBRARY = /^(timm|hf|keras):\S+$/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A library name as a run takes it (`timm:NAME`, `hf:TYPE?key=value&…`, `keras:NAME`). */
export function libraryReference(text: string): string | FieldError {
  const t = text.trim();
  if (LIBRARY.test(t)) return t;
  return { field: "model", message: `model = ${t === "" ? "(empty)" : t} is not allowed: expected timm:NAME, hf:TYPE (with ?key=value&… to change its configuration) or keras:NAME` };
}

/** A model file's reference, `PATH.py:FUNCTION`: an absolute path to a .py
 * file and a Python function's name. */
export function fileReference(path: string, fn: string): string | FieldError {
  const p = path.trim();
  const f = fn.trim();
  if (!p.startsWith("/") || !p.endsWith(".py") || p.endsWith("/.py")) {
    return { field: "model", message: `model file = ${p === "" ? "(none)" : p} is not allowed: expected the absolute path of a Python file (.py); choose it with Choose…` };
  }
  if (!IDENTIFIER.test(f)) {
    return { field: "model", message: `function = ${f === "" ? "(empty)" : f} is not allowed: expected the name of the file's function that returns the model (letters, digits and _, not starting with a digit)` };
  }
  return `${p}:${f}`;
}

const SHAPE_ALLOWED = "CxSxS (channels × height × width, square: 3x224x224) or tokens:N (N token ids per sequence, with a vocab size)";

/** `null` when `text` is an input shape the backend takes (`3x32x32`,
 * `tokens:128`), else the field's error. */
export function checkInputShape(text: string): FieldError | null {
  const t = text.trim();
  const bad = (allowed = SHAPE_ALLOWED) => ({ field: "input_shape", message: `input_shape = ${t === "" ? "(empty)" : t} is not allowed: expected ${allowed}` });
  const whole = (s: string, max: number) => /^\d+$/.test(s) && Number(s) >= 1 && Number(s) <= max;
  if (t.startsWith("tokens:")) return whole(t.slice(7), 2 ** 20) ? null : bad();
  const parts = t.split(/[x×]/);
  if (parts.length !== 3 || !whole(parts[0], 64) || !whole(parts[1], 8192) || !whole(parts[2], 8192)) return bad();
  if (parts[1] !== parts[2]) return bad("square images (height = width), as every image model of the studio takes");
  return null;
}

/** Whether the input shape names token sequences (then a vocab size is needed). */
export function takesTokens(inputShape: string): boolean {
  return inputShape.trim().startsWith("tokens:");
}

/** The models of the form that are not in the catalogue: a person's own. */
export function ownModels(models: string[], catalogue: string[]): string[] {
  return models.filter((m) => !catalogue.includes(m));
}

/** What to search for as a library name is typed: the text after a library's
 * prefix (`timm:resn` → `resn`, names of timm only), nothing under two
 * characters or once configuration follows (`hf:bert?…`). */
export function searchQuery(text: string): { needle: string; prefix: string | null } | null {
  const t = text.trim();
  if (t.includes("?")) return null;
  const m = /^(timm|hf|keras):(.*)$/.exec(t);
  const needle = m ? m[2] : t;
  if (needle.length < 2) return null;
  return { needle, prefix: m ? `${m[1]}:` : null };
}

/** The library names a search found, timm's, Hugging Face's and Keras's. */
export function libraryNames(found: ModelSearch): string[] {
  return [...found.timm, ...found.hf, ...found.keras];
}

/** How the harness trains a model, in words. */
export function trainedAs(family: string): string {
  switch (family) {
    case "image":
      return "an image classifier (cross-entropy over the classes)";
    case "bert":
      return "a sequence classifier (cross-entropy over the classes)";
    case "decoder":
      return "a language model (predicting each next token)";
    default:
      return family;
  }
}

/** The sample a check fed the model: `3×32×32`, or `128 tokens` (a
 * language model's samples hold one more: the last input's next token). */
export function inputText(d: DescribedModel): string | null {
  if (!d.input || d.input.length === 0) return null;
  if (d.input.length > 1) return d.input.join("×");
  return `${d.trained_as === "decoder" ? d.input[0] - 1 : d.input[0]} tokens`;
}
