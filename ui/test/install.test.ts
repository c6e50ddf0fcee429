import { describe, expect, it } from "vitest";
import { installView } from "../src/lib/install";
import type { InstallProgress } from "../src/bindings";

const base: InstallProgress = {
  step: "",
  packages_total: null,
  packages_installed: 0,
  downloads_announced: 0,
  downloads_done: 0,
  bytes_total: 0,
  bytes_done: 0,
  elapsed_s: 0.4,
};

describe("install progress", () => {
  it("says nothing it has not been told", () => {
    const v = installView(base);
    expect(v.step).toBe("starting · 0 s");
    expect(v.packages).toBe("0 installed");
    expect(v.downloads).toBe("none announced yet");
    expect(v.fraction).toBeNull();
  });

  it("shows packages and the announced bytes", () => {
    const v = installView({
      ...base,
      step: "downloading",
      packages_total: 19,
      downloads_announced: 4,
      downloads_done: 1,
      bytes_total: 4 * 1048576,
      bytes_done: 1048576,
      elapsed_s: 12.6,
    });
    expect(v.step).toBe("downloading · 13 s");
    expect(v.packages).toBe("0 of 19 installed");
    expect(v.downloads).toBe("1 MiB of 4 MiB (1 of 4 files)");
    expect(v.fraction).toBe(0.25);
  });
});
