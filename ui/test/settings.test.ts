import { describe, expect, it } from "vitest";
import { settingsText } from "../src/lib/settings";
import { defaultForm, envAlternatives, startLabel, toRequest } from "../src/lib/sweep";

describe("environment variables", () => {
  it("says what a run set and what its worker saw", () => {
    expect(settingsText({ XLA_FLAGS: "--a=1 --b" }, [["TF_CPP_MIN_LOG_LEVEL", "2"], ["XLA_FLAGS", "--a=1 --b"]])).toBe(
      "Variables set: XLA_FLAGS=--a=1 --b · the worker saw: TF_CPP_MIN_LOG_LEVEL=2 XLA_FLAGS=--a=1 --b",
    );
    expect(settingsText(undefined, undefined)).toBe("Variables set: none · the worker saw: no framework variables");
    expect(settingsText({}, [["XLA_FLAGS"], 3])).toBe("Variables set: none · the worker saw: no framework variables");
  });
  it("takes one alternative per non-empty line", () => {
    expect(envAlternatives("XLA_FLAGS=--a=1 --b\n\n  default  \nTF_ENABLE_ONEDNN_OPTS=0;TF_XLA_FLAGS=x\n")).toEqual([
      "XLA_FLAGS=--a=1 --b",
      "default",
      "TF_ENABLE_ONEDNN_OPTS=0;TF_XLA_FLAGS=x",
    ]);
    expect(envAlternatives("")).toEqual([]);
  });
  it("sends the wizard's thread counts and variables as sweep axes", () => {
    const r = toRequest({ ...defaultForm(), threads: "1, 2", envAlternatives: "TF_ENABLE_ONEDNN_OPTS=0\nTF_ENABLE_ONEDNN_OPTS=1" });
    expect("field" in r).toBe(false);
    if (!("field" in r)) {
      expect(r.threads).toEqual([1, 2]);
      expect(r.env).toEqual(["TF_ENABLE_ONEDNN_OPTS=0", "TF_ENABLE_ONEDNN_OPTS=1"]);
    }
    const none = toRequest(defaultForm());
    if (!("field" in none)) expect(none.threads).toEqual([]);
    const bad = toRequest({ ...defaultForm(), threads: "0" });
    expect("field" in bad && bad.field).toBe("threads");
  });
  it("says on Start which releases it installs first", () => {
    const p = { configurations: ["a", "b"], repeats: 1, runs: 2, rejected: [], notes: [], duration: null, to_install: ["jax==0.6.0"] };
    expect(startLabel(p)).toBe("Install jax==0.6.0, then start 2 run(s)");
    expect(startLabel({ ...p, to_install: [] })).toBe("Start 2 run(s)");
    expect(startLabel(null)).toBe("Start 0 run(s)");
  });
});
