// The wizard's "Your model": the reference a run takes, the input shape
// checked as the backend checks it, the search text, the form's fields in the
// request, and the block's rows, Add and a check's results.
import { describe, expect, it } from "vitest";
import { render } from "preact";
import type { DescribedModel } from "../src/bindings";
import { checkInputShape, fileReference, inputText, libraryReference, ownModels, searchQuery } from "../src/lib/ownModel";
import { defaultForm, toRequest, type WizardForm } from "../src/lib/sweep";
import { CheckResults, OwnModelBlock, OwnModelRows } from "../src/views/wizard/OwnModel";

function mount(node: preact.ComponentChild): HTMLElement {
  const el = document.createElement("div");
  render(node, el);
  return el;
}
const flush = () => new Promise((r) => setTimeout(r, 0));

function type(el: HTMLElement, selector: string, value: string) {
  const input = el.querySelector(selector) as HTMLInputElement;
  input.value = value;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

describe("own model references", () => {
  it("builds PATH.py:FUNCTION from an absolute .py path and a Python name", () => {
    expect(fileReference(" /home/me/my model.py ", "build_v2")).toBe("/home/me/my model.py:build_v2");
    expect(fileReference("mymodel.py", "build")).toMatchObject({ field: "model", message: expect.stringContaining("model file = mymodel.py is not allowed: expected the absolute path") });
    expect(fileReference("/home/me/notes.txt", "build")).toMatchObject({ field: "model" });
    expect(fileReference("", "build")).toMatchObject({ message: expect.stringContaining("model file = (none)") });
    expect(fileReference("/m.py", "2fast")).toMatchObject({ field: "model", message: expect.stringContaining("function = 2fast is not allowed") });
    expect(fileReference("/m.py", "a.b")).toMatchObject({ field: "model" });
  });

  it("takes library names with their prefix only", () => {
    expect(libraryReference(" timm:resnet18 ")).toBe("timm:resnet18");
    expect(libraryReference("hf:bert?num_hidden_layers=2")).toBe("hf:bert?num_hidden_layers=2");
    expect(libraryReference("keras:ResNet50")).toBe("keras:ResNet50");
    expect(libraryReference("resnet18")).toMatchObject({ field: "model", message: expect.stringContaining("model = resnet18 is not allowed: expected timm:NAME") });
    expect(libraryReference("timm:")).toMatchObject({ field: "model" });
  });

  it("checks the input shape as the backend does", () => {
    expect(checkInputShape("3x32x32")).toBeNull();
    expect(checkInputShape(" 1×28×28 ")).toBeNull();
    expect(checkInputShape("tokens:128")).toBeNull();
    expect(checkInputShape("3x32x16")).toEqual({ field: "input_shape", message: "input_shape = 3x32x16 is not allowed: expected square images (height = width), as every image model of the studio takes" });
    for (const bad of ["3x32", "0x8x8", "3x8x8x8", "tokens:0", "tokens:", "tokens:1.5", "65x8x8", ""]) {
      expect(checkInputShape(bad), bad).toMatchObject({ field: "input_shape", message: expect.stringContaining("is not allowed: expected CxSxS") });
    }
  });

  it("searches the text after a library's prefix, from two characters, until configuration follows", () => {
    expect(searchQuery("resnet")).toEqual({ needle: "resnet", prefix: null });
    expect(searchQuery("timm:resn")).toEqual({ needle: "resn", prefix: "timm:" });
    expect(searchQuery("keras:Mo")).toEqual({ needle: "Mo", prefix: "keras:" });
    expect(searchQuery("r")).toBeNull();
    expect(searchQuery("hf:b")).toBeNull();
    expect(searchQuery("hf:bert?num_hidden_layers=2")).toBeNull();
  });

  it("tells own models from the catalogue's and words a check's input", () => {
    expect(ownModels(["resnet_mini", "timm:resnet18", "/a/m.py:build"], ["resnet_mini", "vit_mini_patch4_32"])).toEqual(["timm:resnet18", "/a/m.py:build"]);
    const d = (trained_as: string, input: number[] | null): DescribedModel => ({ model: "m", framework: "pytorch", param_count: 1, flops_per_sample: null, flops_method: null, trained_as, input });
    expect(inputText(d("image", [3, 32, 32]))).toBe("3×32×32");
    expect(inputText(d("decoder", [129]))).toBe("128 tokens");
    expect(inputText(d("bert", [128]))).toBe("128 tokens");
    expect(inputText(d("image", null))).toBeNull();
  });
});

describe("the request", () => {
  it("sends the input shape, vocab size and classes, or names the field at fault", () => {
    const r = toRequest({ ...defaultForm(), models: ["/a/lm.py:build"], inputShape: " tokens:64 ", vocabSize: "1000", numClasses: "" });
    expect(r).toMatchObject({ model: ["/a/lm.py:build"], input_shape: "tokens:64", vocab_size: 1000, num_classes: null });
    expect(toRequest(defaultForm())).toMatchObject({ input_shape: null, vocab_size: null, num_classes: null });
    expect(toRequest({ ...defaultForm(), numClasses: "5" })).toMatchObject({ num_classes: 5 });
    expect(toRequest({ ...defaultForm(), inputShape: "3x8" })).toMatchObject({ field: "input_shape" });
    expect(toRequest({ ...defaultForm(), vocabSize: "0" })).toMatchObject({ field: "vocab_size", message: expect.stringContaining("vocab_size = 0 is not allowed") });
    expect(toRequest({ ...defaultForm(), numClasses: "a few" })).toMatchObject({ field: "num_classes" });
  });
});

describe("the Your model block", () => {
  it("adds a model file's reference to the form's models and lists own models as removable rows", async () => {
    const patches: Partial<WizardForm>[] = [];
    const el = mount(<OwnModelBlock catalogue={["resnet_mini"]} form={defaultForm()} set={(p) => patches.push(p)} messages={new Map()} />);
    expect(el.querySelector("#input-shape")).toBeNull();
    const radios = el.querySelectorAll("input[name=own_kind]");
    radios[1].dispatchEvent(new Event("change", { bubbles: true }));
    await flush();
    expect(el.querySelector("#input-shape")).not.toBeNull();
    expect((el.querySelector("#own-add") as HTMLButtonElement).disabled).toBe(true);
    type(el, "#own-file", "/home/me/net.py");
    type(el, "#own-function", "make");
    await flush();
    (el.querySelector("#own-add") as HTMLButtonElement).click();
    expect(patches).toEqual([{ models: ["resnet_mini", "/home/me/net.py:make"] }]);

    const removed: string[] = [];
    const rows = mount(<OwnModelRows own={["timm:resnet18", "/home/me/net.py:make"]} onRemove={(m) => removed.push(m)} />);
    expect(Array.from(rows.querySelectorAll("tr")).map((r) => r.getAttribute("data-model"))).toEqual(["timm:resnet18", "/home/me/net.py:make"]);
    (rows.querySelector("button[aria-label='Remove timm:resnet18']") as HTMLButtonElement).click();
    expect(removed).toEqual(["timm:resnet18"]);
  });

  it("shows a check's counts per framework and its errors under their field, traceback kept", () => {
    const described: DescribedModel = { model: "/a/net.py:build", framework: "pytorch", param_count: 137, flops_per_sample: 4608, flops_method: "FlopCounterMode", trained_as: "image", input: [3, 8, 8] };
    const traceback = "model = /a/net.py:broken: calling broken() raised RuntimeError: no\nTraceback (most recent call last):\n  File \"/a/net.py\", line 2, in broken";
    const el = mount(
      <CheckResults
        results={[
          { framework: "pytorch", described, error: null },
          { framework: "jax", described: null, error: { field: "model", message: traceback } },
        ]}
      />,
    );
    const row = el.querySelector("tr[data-framework=pytorch]");
    expect(row?.querySelector("[data-params]")?.getAttribute("data-params")).toBe("137");
    expect(row?.textContent).toContain("FlopCounterMode");
    expect(row?.textContent).toContain("image classifier");
    expect(row?.textContent).toContain("3×8×8");
    expect(el.querySelector(".field-errors[data-field=model] li")?.textContent).toBe(`jax: ${traceback}`);
  });
});
