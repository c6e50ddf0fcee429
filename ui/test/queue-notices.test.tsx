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
