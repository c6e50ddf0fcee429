// Keyboard shortcuts: what counts as typing, and "/" to the view's search.
import { describe, expect, it } from "vitest";
import { focusSearch, typing } from "../src/lib/keys";

function key(k: string, target: EventTarget) {
  const e = new KeyboardEvent("keydown", { key: k, cancelable: true });
  Object.defineProperty(e, "target", { value: target });
  return e;
}

describe("shortcuts", () => {
  it("treat text fields as typing, checkboxes and buttons not", () => {
    const text = document.createElement("input");
    const box = document.createElement("input");
    box.type = "checkbox";
    expect(typing(text)).toBe(true);
    expect(typing(box)).toBe(false);
    expect(typing(document.createElement("textarea"))).toBe(true);
    expect(typing(document.createElement("button"))).toBe(false);
    expect(typing(null)).toBe(false);
  });

  it('focus the search box with "/" unless typing', () => {
    document.body.innerHTML = '<main><button id="b">x</button><input type="search" id="s"><input id="t"></main>';
    const search = document.getElementById("s") as HTMLInputElement;
    const e = key("/", document.getElementById("b") as HTMLElement);
    focusSearch(e);
    expect(document.activeElement).toBe(search);
    expect(e.defaultPrevented).toBe(true);
    (document.getElementById("t") as HTMLInputElement).focus();
    const typed = key("/", document.getElementById("t") as HTMLElement);
    focusSearch(typed);
    expect(typed.defaultPrevented).toBe(false);
    expect(document.activeElement?.id).toBe("t");
  });
});
