// The window shown when the settings' database cannot be opened: the reason,
// the file, and the two ways on.
import { describe, expect, it } from "vitest";
import { render } from "preact";
import { DatabaseProblem } from "../src/views/DatabaseProblem";

describe("DatabaseProblem", () => {
  it("shows the file, the reason and a way to choose another", () => {
    const el = document.createElement("div");
    render(
      <DatabaseProblem problem="database /x.sqlite is not a TrainBench database" database="/x.sqlite" onChosen={() => {}} choose={async () => null} />,
      el,
    );
    expect(el.querySelector("[role=alertdialog]")).not.toBeNull();
    expect(el.textContent).toContain("is not a TrainBench database");
    expect(el.textContent).toContain("/x.sqlite");
    expect(el.textContent).toContain("nothing you do is kept");
    expect(el.querySelector("#choose-database")?.textContent).toContain("Choose another database");
  });
});
