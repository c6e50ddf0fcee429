import { describe, expect, it } from "vitest";
import { budgetNotices, chosenReleases, notInstalled, pickerLabel, releaseNote } from "../src/lib/releases";
import type { ReleaseChoice } from "../src/bindings";

const list: ReleaseChoice[] = [
  { key: "jax==0.10.2", version: "0.10.2", installed: true, studio_own: true },
  { key: "jax==0.7.2", version: "0.7.2", installed: false, studio_own: false },
  { key: "jax==0.6.2", version: "0.6.2", installed: true, studio_own: false },
];

describe("the version picker", () => {
  it("finds a framework's chosen releases among the sweep's framework keys", () => {
    const keys = ["tch", "jax", "jax==0.7.2", "pytorch==2.12.0", "jax==0.6.2"];
    expect(chosenReleases(keys, "jax")).toEqual(["jax==0.7.2", "jax==0.6.2"]);
    expect(chosenReleases(keys, "tensorflow")).toEqual([]);
    expect(pickerLabel(keys, "jax")).toBe("Other releases… (2 chosen)");
    expect(pickerLabel(keys, "tensorflow")).toBe("Other releases…");
  });

  it("names the chosen releases still to be installed", () => {
    expect(notInstalled(["jax==0.7.2", "jax==0.6.2"], list)).toEqual(["jax==0.7.2"]);
    expect(notInstalled(["jax"], list)).toEqual([]);
  });

  it("says what each release needs", () => {
    expect(list.map(releaseNote)).toEqual(["installed (the studio's own)", "", "installed"]);
  });
});

describe("Start's disk budget", () => {
  it("says the releases removed, then the ones kept because they are in use", () => {
    const removed = { release: "jax==0.6.1", bytes: 3 << 20, words: "removed jax==0.6.1's environment (3 MiB, the least recently used): …" };
    const kept = { release: "jax==0.6.0", bytes: 5 << 20, words: "kept jax==0.6.0's environment (5 MiB) although …: it is in use …" };
    expect(budgetNotices({ made: ["jax==0.6.2"], removed: [removed], kept: [kept] })).toEqual([removed.words, kept.words]);
    expect(budgetNotices({ made: [], removed: [], kept: [] })).toEqual([]);
  });
});
