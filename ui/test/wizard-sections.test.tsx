// The wizard's sections on their own: what each shows follows the form, and
// a change goes back as a patch of the form.
import { describe, expect, it } from "vitest";
import { render } from "preact";
import type { RemoteHost } from "../src/bindings";
import { defaultForm, type WizardForm } from "../src/lib/sweep";
import { toggle } from "../src/views/wizard/fields";
import { PriceSection } from "../src/views/wizard/PriceSection";
import { DataSection, RunOnSection } from "../src/views/wizard/Workload";

function mount(node: preact.ComponentChild): HTMLElement {
  const el = document.createElement("div");
  render(node, el);
  return el;
}

const url = (host: string) => ({ user: null, host, port: null, root: "/scratch/trainbench" });
const host = (name: string, patch: Partial<RemoteHost> = {}): RemoteHost => ({ name, url: url(name), pythons: [], inventory: null, ...patch });
const hosts = [host("plain"), host("pair", { peers: [url("peer")] }), host("login", { slurm: { partition: null } })];

describe("toggle", () => {
  it("adds a value not in the list at the end and removes one that is", () => {
    expect(toggle(["a", "b"], "c")).toEqual(["a", "b", "c"]);
    expect(toggle(["a", "b", "c"], "b")).toEqual(["a", "c"]);
    expect(toggle([], 1)).toEqual([1]);
  });
});

describe("wizard sections", () => {
  it("asks for nodes only on a host that can span several machines", () => {
    const at = (name: string) => mount(<RunOnSection hosts={hosts} form={{ ...defaultForm(), host: name }} set={() => {}} messages={new Map()} />);
    expect(at("").querySelector("input[name=nodes]")).toBeNull();
    expect(at("plain").querySelector("input[name=nodes]")).toBeNull();
    expect(at("pair").querySelector("input[name=nodes]")).not.toBeNull();
    expect(at("login").querySelector("input[name=nodes]")).not.toBeNull();
  });

  it("choosing a host clears the nodes typed for the last one", () => {
    const patches: Partial<WizardForm>[] = [];
    const el = mount(<RunOnSection hosts={hosts} form={{ ...defaultForm(), host: "pair", nodes: "2" }} set={(p) => patches.push(p)} messages={new Map()} />);
    const select = el.querySelector("#run-on") as HTMLSelectElement;
    select.value = "plain";
    select.dispatchEvent(new Event("change", { bubbles: true }));
    expect(patches).toEqual([{ host: "plain", nodes: "" }]);
  });

  it("shows the image folder's fields only for folder data, with their verdicts", () => {
    const messages = new Map([["loader_workers", ["loader_workers = -1 is not allowed: expected 0 or more"]]]);
    const synthetic = mount(<DataSection sources={["synthetic", "folder"]} form={defaultForm()} set={() => {}} messages={messages} />);
    expect(synthetic.querySelector(".folder")).toBeNull();
    const folder = mount(<DataSection sources={["synthetic", "folder"]} form={{ ...defaultForm(), data: "folder" }} set={() => {}} messages={messages} />);
    expect(folder.querySelector("#folder-path")).not.toBeNull();
    expect(folder.querySelector(".folder [data-field=loader_workers]")?.textContent).toBe("loader_workers = -1 is not allowed: expected 0 or more");
  });

  it("asks for an epoch size only when synthetic data is priced", () => {
    const prices = [{ offering: "lab", usd_per_hour: 2, as_of: "2026-01-01" }] as Parameters<typeof PriceSection>[0]["prices"];
    const at = (form: Partial<WizardForm>) => mount(<PriceSection prices={prices} form={{ ...defaultForm(), ...form }} set={() => {}} messages={new Map()} />);
    expect(at({ price: "", data: "synthetic" }).querySelector("#epoch-size")).toBeNull();
    expect(at({ price: "lab", data: "mnist" }).querySelector("#epoch-size")).toBeNull();
    expect(at({ price: "lab", data: "synthetic" }).querySelector("#epoch-size")).not.toBeNull();
  });
});
