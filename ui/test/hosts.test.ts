import { describe, expect, it } from "vitest";
import type { RemoteHost } from "../src/bindings";
import { emptyHostForm, hostAddress, hostSummary, toAddHost } from "../src/lib/hosts";

const host = (over: Partial<RemoteHost> = {}): RemoteHost => ({
  name: "gpu1",
  url: { user: "me", host: "gpu1", port: null, root: ".trainbench-remote" },
  pythons: ["python3"],
  env: [],
  slurm: null,
  peers: [],
  inventory: {
    checked_unix_ms: 0,
    hostname: "gpu1",
    cpu_cores: 16,
    kit_dir: "/home/me/.trainbench-remote/kit/0.1.0-abc",
    root_dir: "/home/me/.trainbench-remote",
    kit_version: "0.1.0-abc",
    frameworks: [{ framework: "pytorch", version: "2.11.0", python: "python3", gpus: ["NVIDIA H100"] }],
    gpus: ["NVIDIA H100", "NVIDIA H100"],
    cluster: null,
    peer_kits: [],
    left_out: [],
  },
  ...over,
});

describe("hosts", () => {
  it("turns the form into the request, lists split and trimmed", () => {
    const r = toAddHost({ ...emptyHostForm(), name: " gpu1 ", url: "ssh://me@gpu1 ", pythons: "python3, /opt/py/bin/python\n", env: "SLURM_CONF=/x\n\n A=b ", slurm: true, partition: " " });
    expect(r).toEqual({ name: "gpu1", url: "ssh://me@gpu1", pythons: ["python3", "/opt/py/bin/python"], env: ["SLURM_CONF=/x", "A=b"], slurm: true, partition: null, peers: [] });
    expect(toAddHost({ ...emptyHostForm(), peers: "ssh://n2\n\n ssh://n3 " }).peers).toEqual(["ssh://n2", "ssh://n3"]);
    expect(toAddHost({ ...emptyHostForm(), partition: "gpu" }).partition).toBeNull();
  });

  it("says what a check found, or that there was none", () => {
    expect(hostSummary(host())).toBe("gpu1 · 16 CPU cores · 2 GPUs (NVIDIA H100) · pytorch 2.11.0");
    expect(hostSummary(host({ inventory: null }))).toBe("not checked");
    const inv = host().inventory;
    if (!inv) throw new Error("the test host has an inventory");
    expect(hostSummary(host({ inventory: { ...inv, gpus: [], frameworks: [], cluster: { scheduler: "Slurm", version: "slurm-wlm 22.05.8", nodes: 2, cpus_per_node: 1, gpus_per_node: 0 } } }))).toBe(
      "gpu1 · 16 CPU cores · Slurm slurm-wlm 22.05.8: 2 nodes, 0 GPU(s) per node · no framework found",
    );
    expect(hostSummary(host({ inventory: { ...inv, gpus: [], cluster: { scheduler: "Ray", version: "2.60.0", nodes: 3, cpus_per_node: 1, gpus_per_node: 2 } } }))).toBe(
      "gpu1 · 16 CPU cores · Ray 2.60.0: 3 nodes, 2 GPU(s) per node · pytorch 2.11.0",
    );
  });

  it("writes a host's address back as it was entered", () => {
    expect(hostAddress(host().url)).toBe("ssh://me@gpu1");
    expect(hostAddress({ user: null, host: "box", port: 2222, root: "x" })).toBe("ssh://box:2222");
    expect(hostAddress({ head: "head", api_port: 8265 })).toBe("ray://head");
    expect(hostAddress({ head: "127.0.0.1", api_port: 28265 })).toBe("ray://127.0.0.1:28265");
  });
});
