// Remote hosts for Settings and the wizard: the add form turned into the
// backend's request, and one line describing what a host's check found.
// Pure: tested in test/hosts.test.ts.
import type { AddHostRequest, HostUrl, RemoteHost } from "../bindings";

export interface HostForm {
  name: string;
  url: string;
  /** Interpreters, separated by commas or new lines. */
  pythons: string;
  /** KEY=VALUE, one per line. */
  env: string;
  slurm: boolean;
  partition: string;
  /** Peers for several nodes without Slurm: ssh:// addresses, one per line. */
  peers: string;
}

export const emptyHostForm = (): HostForm => ({ name: "", url: "ssh://", pythons: "", env: "", slurm: false, partition: "", peers: "" });

const list = (text: string, sep: RegExp) =>
  text
    .split(sep)
    .map((s) => s.trim())
    .filter((s) => s !== "");

/** The request; names, addresses and variables are checked by the backend. */
export function toAddHost(f: HostForm): AddHostRequest {
  return {
    name: f.name.trim(),
    url: f.url.trim(),
    pythons: list(f.pythons, /[,\n]/),
    env: list(f.env, /\n/),
    slurm: f.slurm,
    partition: f.slurm && f.partition.trim() !== "" ? f.partition.trim() : null,
    peers: f.slurm ? [] : list(f.peers, /\n/),
  };
}

/** A host's address as it was entered: `ssh://ada@gpu1:22` or `ray://head:8265`. */
export function hostAddress(u: HostUrl): string {
  if ("head" in u) return `ray://${u.head}${u.api_port === 8265 ? "" : `:${u.api_port}`}`;
  return `ssh://${u.user ? `${u.user}@` : ""}${u.host}${u.port ? `:${u.port}` : ""}`;
}

/** "gpu1 · 16 CPU cores · 8 GPUs (NVIDIA H100) · pytorch 2.11.0, jax 0.11.0". */
export function hostSummary(h: RemoteHost): string {
  const i = h.inventory;
  if (!i) return "not checked";
  const parts = [i.hostname, `${i.cpu_cores} CPU cores`];
  if (i.cluster) {
    const c = i.cluster;
    parts.push(`${c.scheduler} ${c.version}: ${c.nodes} node${c.nodes === 1 ? "" : "s"}, ${c.gpus_per_node} GPU(s) per node`);
  } else if (i.gpus.length > 0) {
    const names = [...new Set(i.gpus)].join(", ");
    parts.push(`${i.gpus.length} GPU${i.gpus.length === 1 ? "" : "s"} (${names})`);
  } else {
    parts.push("no GPU");
  }
  parts.push(i.frameworks.length > 0 ? i.frameworks.map((f) => `${f.framework} ${f.version}`).join(", ") : "no framework found");
  return parts.join(" · ");
}
