// What the wizard's Start did besides queueing (releases removed over the
// disk budget) is shown above the queue, one sentence each.
import { describe, expect, it } from "vitest";
import { render } from "preact";
import { StartNotices } from "../src/views/StartNotices";

describe("StartNotices", () => {
  it("shows each removal as a sentence, and nothing when there is none", () => {
    const el = document.createElement("div");
    const words = "removed jax==0.6.1's environment (913 MiB, the least recently used): the releases' environments were over their 20 GiB disk budget";
    render(<StartNotices notices={[words]} />, el);
    const shown = Array.from(el.querySelectorAll(".queue-notice")).map((p) => p.textContent);
    expect(shown).toEqual([`Removed${words.slice("removed".length)}.`]);
    const empty = document.createElement("div");
    render(<StartNotices notices={[]} />, empty);
    expect(empty.textContent).toBe("");
  });
});

describe("how many runs are left", async () => {
  const { leftWords } = await import("../src/lib/progress");
  const e = (run_id: number, phase: "queued" | "starting" | "training" | "finished") => ({ run_id, label: "", phase, status: null, step: 0, total_steps: null });

  it("counts the run training and those waiting", () => {
    expect(leftWords([e(1, "finished"), e(2, "training"), e(3, "queued"), e(4, "queued")])).toBe("3 runs left: 1 running, 2 waiting.");
    expect(leftWords([e(1, "starting")])).toBe("1 run left: 1 running.");
    expect(leftWords([e(1, "finished")])).toBe("Nothing left to run.");
  });
});
