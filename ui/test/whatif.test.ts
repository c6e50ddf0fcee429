import { describe, expect, it } from "vitest";
import { percent } from "../src/views/WhatIf";

describe("percent", () => {
  it("reads as the CLI prints a share of a published result", () => {
    expect(percent(6.2)).toBe("620 %");
    expect(percent(0.041)).toBe("4.1 %");
    expect(percent(0.0005)).toBe("0.050 %");
    expect(percent(0)).toBe("0 %");
    expect(percent(null)).toBe("0 %");
  });
});
