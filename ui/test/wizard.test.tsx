// The wizard's validation display: parsing what was typed, and showing the
// backend's verdict next to the field at fault, with the run count.
import { describe, expect, it } from "vitest";
import { render } from "preact";
import type { PlanDto } from "../src/bindings";
import { canStart, defaultForm, messagesByField, parseIntList, parseMemory, planText, toRequest } from "../src/lib/sweep";
import { FieldMessages, PlanSummary } from "../src/views/Wizard";

function mount(node: preact.ComponentChild): HTMLElement {
  const el = document.createElement("div");
  render(node, el);
  return el;
}

describe("toRequest", () => {
  it("turns several values into lists (a sweep)", () => {
    const r = toRequest({ ...defaultForm(), batchSizes: "32, 64 128", models: ["resnet_mini", "vit_mini_patch4_32"], repeats: "3" });
    expect("model" in r).toBe(true);
    if (!("model" in r)) return;
    expect(r.batch_size).toEqual([32, 64, 128]);
    expect(r.model).toEqual(["resnet_mini", "vit_mini_patch4_32"]);
    expect(r.repeats).toBe(3);
    expect(r.steps).toBe(100);
    expect(r.epochs).toBeNull();
    expect(r.price).toBeNull();
  });

  it("names the field, the value and what is allowed", () => {
    expect(toRequest({ ...defaultForm(), batchSizes: "32, x" })).toEqual({
      field: "batch_size",
      message: "batch_size = x is not allowed: expected whole numbers from 1 to 65536, separated by commas",
    });
    expect(toRequest({ ...defaultForm(), repeats: "0" })).toMatchObject({ field: "repeats", message: expect.stringContaining("repeats = 0 is not allowed") });
    expect(toRequest({ ...defaultForm(), repeats: "2, 3" })).toMatchObject({ field: "repeats", message: expect.stringContaining("expected one number") });
    expect(toRequest({ ...defaultForm(), targetAccuracy: "150%" })).toMatchObject({ field: "target_accuracy" });
    expect(toRequest({ ...defaultForm(), frameworks: [] })).toMatchObject({ field: "framework" });
    expect(parseIntList("batch_size", "", 1, 8)).toMatchObject({ message: expect.stringContaining("is empty") });
  });

  it("sends an image size, or the model's when empty", () => {
    expect(toRequest({ ...defaultForm(), imageSize: " 160 " })).toMatchObject({ image_size: 160 });
    expect(toRequest(defaultForm())).toMatchObject({ image_size: null });
    expect(toRequest({ ...defaultForm(), imageSize: "0" })).toMatchObject({ field: "image_size", message: expect.stringContaining("image_size = 0 is not allowed") });
  });

  it("sends an image folder with its path and loader workers", () => {
    const r = toRequest({ ...defaultForm(), data: "folder", folderPath: " /data/digits ", loaderWorkers: "0" });
    expect("model" in r && r.data).toBe("folder:/data/digits");
    expect("model" in r && r.loader_workers).toBe(0);
    const d = toRequest({ ...defaultForm(), data: "folder", folderPath: "/data/digits" });
    expect("model" in d && d.loader_workers).toBeNull();
    expect(toRequest({ ...defaultForm(), data: "folder" })).toMatchObject({ field: "data", message: expect.stringContaining("needs the image folder") });
    expect(toRequest({ ...defaultForm(), data: "folder", folderPath: "/d", loaderWorkers: "-1" })).toMatchObject({ field: "loader_workers" });
    // Other data ignores what was typed for a folder.
    const m = toRequest({ ...defaultForm(), data: "mnist", folderPath: "/d", loaderWorkers: "3" });
    expect("model" in m && [m.data, m.loader_workers]).toEqual(["mnist", null]);
  });

  it("reads a target as a fraction or a percentage", () => {
    const a = toRequest({ ...defaultForm(), targetAccuracy: "0.95" });
    const b = toRequest({ ...defaultForm(), targetAccuracy: "95 %".replace(" ", "") });
    expect("model" in a && a.target_accuracy).toBeCloseTo(0.95);
    expect("model" in b && b.target_accuracy).toBeCloseTo(0.95);
  });

  it("accepts a target of 1.0 (every held-out sample right) and 100 %", () => {
    for (const text of ["1.0", "1", "100%"]) {
      const r = toRequest({ ...defaultForm(), targetAccuracy: text });
      expect("model" in r && r.target_accuracy).toBe(1);
    }
    expect(toRequest({ ...defaultForm(), targetAccuracy: "0" })).toMatchObject({ field: "target_accuracy" });
  });

  it("sends a target loss, and refuses one that is not a number > 0", () => {
    const r = toRequest({ ...defaultForm(), targetLoss: "3.5" });
    expect("model" in r && [r.target_loss, r.target_accuracy]).toEqual([3.5, null]);
    expect(toRequest({ ...defaultForm(), targetLoss: "-1" })).toMatchObject({ field: "target_loss" });
    expect(toRequest({ ...defaultForm(), targetLoss: "low" })).toMatchObject({ field: "target_loss" });
  });
});

describe("epoch size", () => {
  it("is sent when given, and refused when not a whole number ≥ 1", () => {
    const none = toRequest(defaultForm());
    expect("model" in none && none.epoch_size).toBe(null);
    const given = toRequest({ ...defaultForm(), epochSize: "50000" });
    expect("model" in given && given.epoch_size).toBe(50000);
    const bad = toRequest({ ...defaultForm(), epochSize: "lots" });
    expect("field" in bad && bad.field).toBe("epoch_size");
  });
});

const plan: PlanDto = {
  configurations: ["tch resnet_mini fp32 ×1 b64", "tch vit_mini_patch4_32 fp32 ×1 b64"],
  repeats: 2,
  runs: 4,
  rejected: [
    { label: "tch resnet_mini amp-fp16 ×1 b64", field: "precision", message: "precision = amp-fp16 is not allowed on the CPU: expected fp32 or amp-bf16" },
    { label: "tch vit_mini_patch4_32 amp-fp16 ×1 b64", field: "precision", message: "precision = amp-fp16 is not allowed on the CPU: expected fp32 or amp-bf16" },
  ],
  notes: [],
  duration: null,
  to_install: [],
};

describe("the largest batch that fits", () => {
  it("asks for a search with max and passes the memory limit in bytes", () => {
    const r = toRequest({ ...defaultForm(), batchSizes: " max ", memoryLimit: "512MiB" });
    expect(r).toMatchObject({ batch_max: true, batch_size: [], memory_limit_bytes: 512 * 2 ** 20 });
    expect(toRequest(defaultForm())).toMatchObject({ batch_max: false, memory_limit_bytes: null });
  });

  it("reads sizes as the CLI does and names the field of a bad one", () => {
    expect(parseMemory("8G")).toBe(8 * 2 ** 30);
    expect(parseMemory("8GiB")).toBe(8 * 2 ** 30);
    expect(parseMemory("1.5g")).toBe(1.5 * 2 ** 30);
    expect(parseMemory("4096")).toBe(4096);
    expect(parseMemory("lots")).toBeNull();
    expect(parseMemory("0")).toBeNull();
    expect(toRequest({ ...defaultForm(), memoryLimit: "3Q" })).toMatchObject({ field: "memory_limit", message: expect.stringContaining("memory_limit = 3Q is not allowed") });
    expect(toRequest({ ...defaultForm(), batchSizes: "32, max" })).toMatchObject({ field: "batch_size" });
  });
});

describe("the verdict", () => {
  it("counts runs and the combinations that cannot run", () => {
    expect(planText(plan)).toBe("2 configurations × 2 repeats = 4 runs (2 combinations cannot run)");
    expect(planText({ ...plan, rejected: [], configurations: ["a"], repeats: 1, runs: 1 })).toBe("1 configuration × 1 repeat = 1 run");
  });

  it("puts each message under its field, naming the combination", () => {
    const m = messagesByField(plan.rejected);
    expect([...m.keys()]).toEqual(["precision"]);
    expect(m.get("precision")).toHaveLength(2);
    expect(m.get("precision")?.[0]).toMatch(/^tch resnet_mini amp-fp16 ×1 b64: precision = amp-fp16/);
    const all = messagesByField([{ label: null, field: "price", message: "price = X is not allowed" }]);
    expect(all.get("price")).toEqual(["price = X is not allowed"]);
  });

  it("allows starting what can run, never a sweep refused as a whole", () => {
    expect(canStart(plan)).toBe(true);
    expect(canStart({ ...plan, configurations: [], runs: 0 })).toBe(false);
    expect(canStart({ ...plan, rejected: [{ label: null, field: "steps", message: "give steps or epochs" }] })).toBe(false);
    expect(canStart(null)).toBe(false);
  });

  it("renders the messages next to the field and the count in the footer", () => {
    const el = mount(<FieldMessages field="precision" messages={messagesByField(plan.rejected)} />);
    const items = el.querySelectorAll("ul.field-errors[data-field=precision] li");
    expect(items).toHaveLength(2);
    expect(items[1].textContent).toContain("vit_mini_patch4_32 amp-fp16");
    expect(mount(<FieldMessages field="model" messages={messagesByField(plan.rejected)} />).innerHTML).toBe("");

    const summary = mount(<PlanSummary plan={plan} parseError={null} />);
    expect(summary.querySelector("[data-plan]")?.getAttribute("data-plan")).toBe("4");
    expect(summary.textContent).toContain("= 4 runs (2 combinations cannot run)");
    expect(summary.querySelectorAll("details li")).toHaveLength(2);
    expect(summary.querySelector("#plan-duration")?.textContent).toContain("No duration estimate");
    const timed = mount(<PlanSummary plan={{ ...plan, duration: { seconds: 120, runs_estimated: 4, runs_total: 4, at_most: false, text: "about 2 min for 4 of 4 run(s)" } }} parseError={null} />);
    expect(timed.querySelector("#plan-duration")?.textContent).toBe("Estimated duration: about 2 min for 4 of 4 run(s).");

    const bad = mount(<PlanSummary plan={null} parseError={{ field: "batch_size", message: "batch_size = x is not allowed" }} />);
    expect(bad.querySelector("[data-plan=invalid]")?.textContent).toBe("batch_size = x is not allowed");
  });
});
