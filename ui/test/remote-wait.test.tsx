// A remote run whose end was not read: where it is, how to follow it, and
// stopping the wait (after a confirmation) calls the app and reloads.
import { describe, expect, it } from "vitest";
import { render } from "preact";
import { RemoteWait } from "../src/views/RemoteWait";
import type { RemoteRunView } from "../src/bindings";

const remote: RemoteRunView = { host: "box", url: "ssh://box", dir: "/srv/tb/runs/r7", journal_bytes: 1234, waiting: true, followed: false };
const flush = () => new Promise((r) => setTimeout(r, 0));

describe("RemoteWait", () => {
  it("says where the run is and abandons it only after confirming", async () => {
    const el = document.createElement("div");
    const calls: number[] = [];
    const attached: number[] = [];
    let changed = 0;
    render(
      <RemoteWait runId={7} remote={remote} attach={async (id) => void attached.push(id)} abandon={async (id) => void calls.push(id)} onChanged={() => changed++} onError={() => {}} />,
      el,
    );
    expect(el.textContent).toContain("trainbench attach 7");
    expect(el.textContent).toContain("/srv/tb/runs/r7");
    (el.querySelector("#abandon-run") as HTMLButtonElement).click();
    await flush();
    expect(calls).toEqual([]);
    const confirm = Array.from(el.querySelectorAll(".modal button")).find((b) => b.textContent === "Stop waiting") as HTMLButtonElement;
    confirm.click();
    await flush();
    expect(calls).toEqual([7]);
    expect(changed).toBe(1);
    (el.querySelector("#attach-run") as HTMLButtonElement).click();
    await flush();
    expect(attached).toEqual([7]);
    expect(changed).toBe(2);
  });

  it("shows nothing once the run's end was read, and no button while the queue reads it", () => {
    const el = document.createElement("div");
    render(<RemoteWait runId={7} remote={{ ...remote, waiting: false }} attach={async () => {}} abandon={async () => {}} onChanged={() => {}} onError={() => {}} />, el);
    expect(el.textContent).toBe("");
    render(<RemoteWait runId={7} remote={{ ...remote, followed: true }} attach={async () => {}} abandon={async () => {}} onChanged={() => {}} onError={() => {}} />, el);
    expect(el.querySelector("#abandon-run")).toBeNull();
  });
});
