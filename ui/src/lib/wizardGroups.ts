// The wizard's sections, folded: what each says on its folded line (the
// choices made in it), and which start unfolded — the ones every benchmark
// needs, and any other whose fields differ from the defaults.
import { defaultForm, type WizardForm } from "./sweep";

export type Group = "model" | "frameworks" | "hardware" | "workload" | "measuring" | "price";

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The choices a section holds, in a line. */
export function groupLine(g: Group, f: WizardForm): string {
  switch (g) {
    case "model":
      return f.models.length === 0 ? "none chosen" : `${plural(f.models.length, "model")}: ${f.models.join(", ")}`;
    case "frameworks":
      return f.frameworks.length === 0 ? "none chosen" : f.frameworks.join(", ");
    case "hardware":
      return [f.precisions.join(", ") || "no precision", `compile ${f.compile.join(", ") || "—"}`, `${f.devices.join(", ") || "—"} device(s)`].join(" · ");
    case "workload": {
      const length = f.length === "steps" ? `${f.steps} steps` : plural(Number(f.epochs) || 0, "epoch");
      return [`batch ${f.batchSizes || "—"}`, `${f.data} data`, length, f.host ? `on ${f.host}` : "on this machine"].join(" · ");
    }
    case "measuring": {
      const parts = [plural(Number(f.repeats) || 1, "repeat")];
      if (f.targetAccuracy) parts.push(`target accuracy ${f.targetAccuracy} %`);
      if (f.targetLoss) parts.push(`target loss ${f.targetLoss}`);
      parts.push(f.threads ? `threads ${f.threads}` : "the framework's threads");
      if (f.cudnnBenchmark) parts.push(`cuDNN benchmark ${f.cudnnBenchmark}`);
      if (f.envAlternatives.trim()) parts.push("environment variables compared");
      if (f.profile) parts.push("operator profile");
      return parts.join(" · ");
    }
    case "price":
      return f.price ? `priced as ${f.price}` : "no price: cost not computed";
  }
}

/** Whether a section starts unfolded. */
export function startsOpen(g: Group, f: WizardForm): boolean {
  const d = defaultForm();
  switch (g) {
    case "measuring":
      return f.repeats !== d.repeats || !!f.targetAccuracy || !!f.targetLoss || !!f.threads || !!f.cudnnBenchmark || !!f.envAlternatives.trim() || f.profile;
    case "price":
      return !!f.price || !!f.epochSize;
    default:
      return true;
  }
}
