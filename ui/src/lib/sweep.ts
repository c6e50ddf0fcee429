// The wizard's form, turned into the backend's SweepRequest. Text fields take
// several values separated by commas ("32, 64"); every list with more than one
// value multiplies the sweep. Whether a combination can run is decided by the
// backend (`plan`), with the same rules as `trainbench run`; this file only
// parses what was typed and shows the verdict next to the field at fault.
import type { PlanDto, Rejected, SweepRequest } from "../bindings";
import { checkInputShape } from "./ownModel";

export interface WizardForm {
  models: string[];
  frameworks: string[];
  precisions: string[];
  compile: string[];
  devices: number[];
  /** A remote host's name; "" = this machine. */
  host: string;
  /** Nodes per run on a Slurm host ("" = 1). */
  nodes: string;
  batchSizes: string;
  data: string;
  /** With data "folder": the image folder (train/<class>/ and val/<class>/, or <class>/). */
  folderPath: string;
  /** With data "folder": workers that decode while training runs ("" = the default, 2). */
  loaderWorkers: string;
  length: "steps" | "epochs";
  steps: string;
  epochs: string;
  targetAccuracy: string;
  /** A held-out loss to reach instead (time to loss; text models). */
  targetLoss: string;
  repeats: string;
  price: string;
  /** Samples in the epoch cost per epoch is priced for, on synthetic data
   * ("" = the default: ImageNet-1k for an image model, none for a text model). */
  epochSize: string;
  /** The operator profile after the timed part. */
  profile: boolean;
  /** Pixels per side of an image model's input ("" = the model's). */
  imageSize: string;
  /** Resident memory a worker may use ("8G", "512MiB"); needed by a batch
   * search ("max") on the CPU. */
  memoryLimit: string;
  /** Environment variables to compare, one alternative per line
   * (`XLA_FLAGS=…`, several joined by `;`, or `default` for none set). */
  envAlternatives: string;
  /** CPU threads, one or more ("1, 2"; "" = the framework's own choice). */
  threads: string;
  /** cuDNN's benchmark mode on a GPU: the worker's default, on, off, or both compared. */
  cudnnBenchmark: "" | "on" | "off" | "both";
  /** What a model file takes: `CxSxS` or `tokens:N` ("" = none given). */
  inputShape: string;
  /** The token ids' range of a model file taking tokens ("" = none given). */
  vocabSize: string;
  /** The classes a model predicts ("" = the model's own). */
  numClasses: string;
}

/** The environment variables' alternatives of the form: one per non-empty line. */
export function envAlternatives(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
}

export const defaultForm = (): WizardForm => ({
  models: ["resnet_mini"],
  frameworks: ["tch"],
  precisions: ["fp32"],
  compile: ["off"],
  devices: [1],
  host: "",
  nodes: "",
  batchSizes: "64",
  data: "synthetic",
  folderPath: "",
  loaderWorkers: "",
  length: "steps",
  steps: "100",
  epochs: "1",
  targetAccuracy: "",
  targetLoss: "",
  repeats: "1",
  price: "",
  epochSize: "",
  imageSize: "",
  profile: false,
  memoryLimit: "",
  envAlternatives: "",
  threads: "",
  cudnnBenchmark: "",
  inputShape: "",
  vocabSize: "",
  numClasses: "",
});

/** A memory size as `trainbench run --memory-limit` takes it: bytes, or a
 * number with K, M, G or T (powers of 1024, with or without iB/B). */
export function parseMemory(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(text);
  if (!m) return null;
  const mult = { "": 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 }[m[2].toLowerCase() as "" | "k" | "m" | "g" | "t"];
  const bytes = Math.floor(Number(m[1]) * mult);
  return bytes >= 1 ? bytes : null;
}

/** A field's problem found while parsing, before the backend is asked. */
export interface FieldError {
  field: string;
  message: string;
}

export function parseIntList(field: string, text: string, min: number, max: number): number[] | FieldError {
  const parts = text.split(/[,\s]+/).filter((p) => p.length > 0);
  if (parts.length === 0) return { field, message: `${field} is empty: expected one or more whole numbers from ${min} to ${max}, separated by commas` };
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d+$/.test(p)) return { field, message: `${field} = ${p} is not allowed: expected whole numbers from ${min} to ${max}, separated by commas` };
    const v = Number(p);
    if (v < min || v > max) return { field, message: `${field} = ${p} is not allowed: expected ${min} to ${max}` };
    if (!out.includes(v)) out.push(v);
  }
  return out;
}

function parseOne(field: string, text: string, min: number, max: number): number | FieldError {
  const r = parseIntList(field, text, min, max);
  if (!Array.isArray(r)) return r;
  if (r.length !== 1) return { field, message: `${field} = ${text} is not allowed: expected one number` };
  return r[0];
}

interface InputFields {
  imageSize: number | null;
  inputShape: string | null;
  vocabSize: number | null;
  numClasses: number | null;
}

/** What the models take and predict: the image size, and a person's own
 * model's input shape, vocab size and classes. */
function inputFields(f: WizardForm): InputFields | FieldError {
  let imageSize: number | null = null;
  if (f.imageSize.trim() !== "") {
    const n = parseOne("image_size", f.imageSize, 1, 8192);
    if (typeof n !== "number") return n;
    imageSize = n;
  }
  let inputShape: string | null = null;
  if (f.inputShape.trim() !== "") {
    const bad = checkInputShape(f.inputShape);
    if (bad) return bad;
    inputShape = f.inputShape.trim();
  }
  let vocabSize: number | null = null;
  if (f.vocabSize.trim() !== "") {
    const v = parseOne("vocab_size", f.vocabSize, 1, 2 ** 31 - 1);
    if (typeof v !== "number") return v;
    vocabSize = v;
  }
  let numClasses: number | null = null;
  if (f.numClasses.trim() !== "") {
    const n = parseOne("num_classes", f.numClasses, 1, 1_000_000);
    if (typeof n !== "number") return n;
    numClasses = n;
  }
  return { imageSize, inputShape, vocabSize, numClasses };
}

/** The request, or the first field that cannot be parsed. */
export function toRequest(f: WizardForm): SweepRequest | FieldError {
  // "max": the largest power of two that fits, probed before the runs.
  const batchMax = f.batchSizes.trim().toLowerCase() === "max";
  const batch = batchMax ? [] : parseIntList("batch_size", f.batchSizes, 1, 65536);
  if (!Array.isArray(batch)) return batch;
  let memoryLimit: number | null = null;
  if (f.memoryLimit.trim() !== "") {
    memoryLimit = parseMemory(f.memoryLimit);
    if (memoryLimit === null) {
      return { field: "memory_limit", message: `memory_limit = ${f.memoryLimit} is not allowed: expected a size such as 8G, 8GiB or 512MiB` };
    }
  }
  const repeats = parseOne("repeats", f.repeats, 1, 50);
  if (typeof repeats !== "number") return repeats;
  let nodes: number | null = null;
  if (f.host !== "" && f.nodes.trim() !== "") {
    const n = parseOne("nodes", f.nodes, 1, 4096);
    if (typeof n !== "number") return n;
    nodes = n;
  }
  let data = f.data;
  let loaderWorkers: number | null = null;
  if (f.data === "folder") {
    if (f.folderPath.trim() === "") {
      return { field: "data", message: "data = folder needs the image folder: a directory with train/<class>/ and val/<class>/, or <class>/ folders of JPEG/PNG images" };
    }
    data = `folder:${f.folderPath.trim()}`;
    if (f.loaderWorkers.trim() !== "") {
      const n = parseOne("loader_workers", f.loaderWorkers, 0, 64);
      if (typeof n !== "number") return n;
      loaderWorkers = n;
    }
  }
  let steps: number | null = null;
  let epochs: number | null = null;
  if (f.length === "steps") {
    const s = parseOne("steps", f.steps, 1, 10_000_000);
    if (typeof s !== "number") return s;
    steps = s;
  } else {
    const e = parseOne("epochs", f.epochs, 1, 10_000);
    if (typeof e !== "number") return e;
    epochs = e;
  }
  let target: number | null = null;
  if (f.targetAccuracy.trim() !== "") {
    const t = Number(f.targetAccuracy.trim().replace(/%$/, ""));
    const v = f.targetAccuracy.trim().endsWith("%") || t > 1 ? t / 100 : t;
    if (!Number.isFinite(t) || v <= 0 || v > 1) {
      return { field: "target_accuracy", message: `target_accuracy = ${f.targetAccuracy} is not allowed: expected a fraction in (0, 1] (0.95, 1.0) or a percentage up to 100 % (95 %)` };
    }
    target = v;
  }
  let targetLoss: number | null = null;
  if (f.targetLoss.trim() !== "") {
    const l = Number(f.targetLoss.trim());
    if (!Number.isFinite(l) || l <= 0) return { field: "target_loss", message: `target_loss = ${f.targetLoss} is not allowed: expected a number > 0 (a held-out loss, e.g. 3.5)` };
    targetLoss = l;
  }

  let epochSize: number | null = null;
  if (f.epochSize.trim() !== "") {
    const n = parseOne("epoch_size", f.epochSize, 1, Number.MAX_SAFE_INTEGER);
    if (typeof n !== "number") return n;
    epochSize = n;
  }
  let threads: number[] = [];
  if (f.threads.trim() !== "") {
    const t = parseIntList("threads", f.threads, 1, 4096);
    if (!Array.isArray(t)) return t;
    threads = t;
  }
  const own = inputFields(f);
  if ("field" in own) return own;
  for (const [field, list] of [["model", f.models], ["framework", f.frameworks], ["precision", f.precisions], ["compile", f.compile]] as const) {
    if (list.length === 0) return { field, message: `${field}: choose at least one` };
  }
  if (f.devices.length === 0) return { field: "devices", message: "devices: choose at least one device count" };
  return {
    model: f.models,
    framework: f.frameworks,
    precision: f.precisions,
    compile: f.compile,
    devices: f.devices,
    host: f.host === "" ? null : f.host,
    nodes,
    parallel: null,
    batch_size: batch,
    device: null,
    steps,
    epochs,
    data,
    loader_workers: loaderWorkers,
    num_classes: own.numClasses,
    input_shape: own.inputShape,
    vocab_size: own.vocabSize,
    seq_len: null,
    image_size: own.imageSize,
    target_accuracy: target,
    target_loss: targetLoss,
    eval_every_steps: null,
    stop_at_target: true,
    window_steps: null,
    threads,
    env: envAlternatives(f.envAlternatives),
    cudnn_benchmark: { "": [], on: [true], off: [false], both: [true, false] }[f.cudnnBenchmark],
    lr: null,
    repeats,
    price: f.price === "" ? null : f.price,
    epoch_size: epochSize,
    profile: f.profile,
    batch_max: batchMax,
    batch_cap: null,
    memory_limit_bytes: memoryLimit,
  };
}

/** Which wizard field a backend verdict belongs to. */
export function fieldOf(r: Rejected): string {
  const f = r.field;
  if (f === "batch_size" || f === "global_batch") return "batch_size";
  if (f === "devices" || f === "device" || f === "parallel") return "devices";
  if (f === "epochs" || f === "steps" || f === "data") return f;
  return f;
}

/** Messages per field, each naming the combination when it is not all of them. */
export function messagesByField(rejected: Rejected[]): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const r of rejected) {
    const key = fieldOf(r);
    const text = r.label === null ? r.message : `${r.label}: ${r.message}`;
    const list = m.get(key) ?? [];
    if (!list.includes(text)) list.push(text);
    m.set(key, list);
  }
  return m;
}

/** "3 configurations × 2 repeats = 6 runs (1 combination cannot run)". */
export function planText(p: PlanDto): string {
  const c = p.configurations.length;
  const runs = `${c} configuration${c === 1 ? "" : "s"} × ${p.repeats} repeat${p.repeats === 1 ? "" : "s"} = ${p.runs} run${p.runs === 1 ? "" : "s"}`;
  const bad = p.rejected.length;
  return bad === 0 ? runs : `${runs} (${bad} combination${bad === 1 ? "" : "s"} cannot run)`;
}

/** Whether the sweep can start: something to run and no verdict against all combinations. */
/** The Start button's words: releases to install first, and the runs. */
export function startLabel(p: PlanDto | null): string {
  const runs = p?.runs ?? 0;
  const what = p && p.rejected.length > 0 && runs > 0 ? `${runs} run(s), skip the rest` : `${runs} run(s)`;
  const installs = p?.to_install ?? [];
  if (installs.length === 0) return `Start ${what}`;
  return `Install ${installs.join(", ")}, then start ${what}`;
}

export function canStart(p: PlanDto | null): boolean {
  return p !== null && p.runs > 0 && !p.rejected.some((r) => r.label === null);
}
