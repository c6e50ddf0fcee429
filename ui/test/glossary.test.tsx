// The glossary page's search and the explained words' tooltips.
import { render } from "preact";
import { describe, expect, it } from "vitest";
import { searchTerms, setGlossary } from "../src/lib/glossary";
import { Explained } from "../src/views/Glossary";

const terms = [
  { key: "mfu", term: "MFU", meaning: "Model FLOPs utilisation: a share of the peak." },
  { key: "amp-bf16", term: "amp-bf16", meaning: "Mixed precision in bfloat16." },
];

describe("glossary", () => {
  it("finds terms by word, key or meaning", () => {
    expect(searchTerms(terms, "").map((t) => t.key)).toEqual(["mfu", "amp-bf16"]);
    expect(searchTerms(terms, "bfloat").map((t) => t.key)).toEqual(["amp-bf16"]);
    expect(searchTerms(terms, " mfu ").map((t) => t.key)).toEqual(["mfu"]);
    expect(searchTerms(terms, "nothing")).toEqual([]);
  });

  it("underlines a known word with its meaning, and leaves an unknown one plain", () => {
    setGlossary(terms);
    const root = document.createElement("div");
    render(
      <p>
        <Explained k="mfu" /> and <Explained k="nope">plain</Explained>
      </p>,
      root,
    );
    const abbr = root.querySelector("abbr.term");
    expect(abbr?.textContent).toBe("MFU");
    expect(abbr?.getAttribute("title")).toContain("FLOPs utilisation");
    expect(root.textContent).toBe("MFU and plain");
    expect(root.querySelectorAll("abbr")).toHaveLength(1);
  });
});
