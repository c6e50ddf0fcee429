// What the wizard shows while a framework installs: the installer's own
// figures (packages, announced download bytes), never an estimate.
import type { InstallProgress } from "../bindings";
import { bytes } from "./format";

export interface InstallView {
  step: string;
  packages: string;
  downloads: string;
  /** Finished share of the announced download bytes, or null before any were announced. */
  fraction: number | null;
}

export function installView(p: InstallProgress): InstallView {
  const packages =
    p.packages_total === null
      ? `${p.packages_installed} installed`
      : `${p.packages_installed} of ${p.packages_total} installed`;
  const downloads =
    p.downloads_announced === 0
      ? "none announced yet"
      : `${bytes(p.bytes_done)} of ${bytes(p.bytes_total)} (${p.downloads_done} of ${p.downloads_announced} files)`;
  return {
    step: `${p.step || "starting"} · ${Math.round(p.elapsed_s ?? 0)} s`,
    packages,
    downloads,
    fraction: p.bytes_total > 0 ? Math.min(1, p.bytes_done / p.bytes_total) : null,
  };
}
