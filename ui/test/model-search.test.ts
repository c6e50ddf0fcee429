// The wizard's model search as pure functions: the catalogue's rows before
// an answer, and what the list says about what it leaves out.
import { describe, expect, it } from "vitest";
import type { FoundModel, FoundModels } from "../src/bindings";
import { count } from "../src/lib/format";
import { catalogueRows, cpuText, LISTED, listNotes, NO_QUERY, narrows, searchesLibraries, sizeText } from "../src/lib/modelSearch";

const lib = (name: string, params: number | null): FoundModel => ({ name, source: "timm", family: "vision_transformer", params, cpu: params === null ? null : params <= 5e6, flops_per_sample: null, summary: "" });
const answer = (models: FoundModel[], not_counted = 0): FoundModels => ({ models, families: [], not_counted, notes: [] });

describe("model search", () => {
  it("lists the catalogue as rows with its sizes and CPU flags before any answer", () => {
    const rows = catalogueRows([{ name: "resnet_mini", family: "resnet", summary: "small", cpu_friendly: true, param_count: 78042, flops_per_sample: 7.5e7, input: "" }]);
    expect(rows).toEqual([{ name: "resnet_mini", source: "catalogue", family: "resnet", params: 78042, cpu: true, flops_per_sample: 7.5e7, summary: "small" }]);
    expect(cpuText(rows[0])).toBe("trains on a CPU");
  });

  it("says a library model's size or that it is not counted, and how it judges a CPU", () => {
    expect(sizeText(lib("timm:test_vit", 371240), count)).toBe("371.2 k");
    expect(sizeText(lib("timm:vit_huge", null), count)).toBe("not counted");
    expect(cpuText(lib("timm:test_vit", 371240))).toBe("small enough for a CPU");
    expect(cpuText(lib("timm:vit_base", 86e6))).toBe("needs a GPU");
    expect(cpuText(lib("timm:vit_huge", null))).toBe("");
  });

  it("names what the list leaves out: more rows, sizes not counted, libraries not searched", () => {
    const q = { ...NO_QUERY, text: "vit", size: "tiny" as const };
    const many = Array.from({ length: LISTED + 5 }, (_, i) => lib(`timm:m${i}`, 1000));
    const notes = listNotes(answer(many, 12), q);
    expect(notes[0]).toBe("5 more match: type more of the name or choose a family.");
    expect(notes[1]).toBe("12 library models have no size counted yet and are left out by the size filters.");
    expect(listNotes(answer([], 3), { ...NO_QUERY, text: "vit" })).toEqual(["3 library models have no size counted yet."]);
    expect(listNotes(answer([]), { ...NO_QUERY, text: "v" })).toEqual(["Type two or more letters to search timm, Hugging Face and Keras models too."]);
  });

  it("an empty query narrows nothing; a filter or text does", () => {
    expect(narrows(NO_QUERY)).toBe(false);
    expect(narrows({ ...NO_QUERY, cpu_only: true })).toBe(true);
    expect(searchesLibraries({ ...NO_QUERY, text: " vi " })).toBe(true);
  });
});

describe("the wizard's folding sections", async () => {
  const { groupLine, startsOpen } = await import("../src/lib/wizardGroups");
  const { defaultForm } = await import("../src/lib/sweep");

  it("say on their folded line what they hold", () => {
    const f = { ...defaultForm(), models: ["resnet_mini", "timm:test_vit"], precisions: ["fp32", "amp-bf16"], repeats: "3", targetAccuracy: "90" };
    expect(groupLine("model", f)).toBe("2 models: resnet_mini, timm:test_vit");
    expect(groupLine("hardware", f)).toBe("fp32, amp-bf16 · compile off · 1 device(s)");
    expect(groupLine("workload", f)).toBe("batch 64 · synthetic data · 100 steps · on this machine");
    expect(groupLine("measuring", f)).toBe("3 repeats · target accuracy 90 % · the framework's threads");
    expect(groupLine("price", f)).toBe("no price: cost not computed");
  });

  it("start unfolded where every benchmark needs them, or where a field is not the default", () => {
    const d = defaultForm();
    expect(["model", "frameworks", "hardware", "workload"].every((g) => startsOpen(g as never, d))).toBe(true);
    expect(startsOpen("measuring", d)).toBe(false);
    expect(startsOpen("price", d)).toBe(false);
    expect(startsOpen("measuring", { ...d, threads: "1, 2" })).toBe(true);
    expect(startsOpen("price", { ...d, price: "H100 on demand" })).toBe(true);
  });
});
