/** The CLI's heap setting (src/cli/heap.ts): set unless the user sized the heap themselves. */
import { describe, expect, it } from "vitest";
import { wantsSmallHeap } from "../../src/cli/heap.js";

describe("wantsSmallHeap", () => {
  it("is on by default and off when node or NODE_OPTIONS size the heap", () => {
    expect(wantsSmallHeap([], undefined)).toBe(true);
    expect(wantsSmallHeap(["--enable-source-maps"], "--trace-warnings")).toBe(true);
    expect(wantsSmallHeap([], "--max-old-space-size=512")).toBe(false);
    expect(wantsSmallHeap([], "--trace-warnings --max_old_space_size=512")).toBe(false);
    expect(wantsSmallHeap(["--no-optimize-for-size"], undefined)).toBe(false);
    expect(wantsSmallHeap(["--max-semi-space-size=8"], "")).toBe(false);
    // a flag that only starts the same way is not a heap size
    expect(wantsSmallHeap([], "--max-old-space-sizes-are-fine")).toBe(true);
  });

  it("is off for the verbs bound by the CPU (validate, test), on for the verbs that talk to the service", () => {
    expect(wantsSmallHeap([], undefined, ["validate", "rules/"])).toBe(false);
    expect(wantsSmallHeap([], undefined, ["--no-color", "test"])).toBe(false);
    expect(wantsSmallHeap([], undefined, ["plan", "validate/"])).toBe(true);
    expect(wantsSmallHeap([], undefined, ["apply", "plan.json"])).toBe(true);
  });
});
