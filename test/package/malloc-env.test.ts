/**
 * The glibc setting a large tenant's runs need (docs/operating.md, "Memory on a large tenant") is the same in every
 * place that sets it: the image, the systemd unit, the docs, and the benchmark that measures it (`--image-malloc`).
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { IMAGE_MALLOC } from "../../bench/src/million.js";
import { parseBenchArgs } from "../../bench/src/args.js";

const pairs = Object.entries(IMAGE_MALLOC);

describe("the image's glibc setting", () => {
  it("names a fixed mmap threshold", () => {
    expect(pairs).toEqual([["MALLOC_MMAP_THRESHOLD_", "131072"]]);
  });

  it("is set by the runtime stage of the Dockerfile", async () => {
    const text = await readFile("Dockerfile", "utf8");
    const runtime = text.slice(text.lastIndexOf("\nFROM "));
    const env = runtime.split("\n").find((l) => l.startsWith("ENV ")) ?? "";
    for (const [k, v] of pairs) expect(env.split(/\s+/)).toContain(`${k}=${v}`);
  });

  it("is set by the systemd unit", async () => {
    const unit = await readFile("examples/deploy/systemd/flowrules-watch.service", "utf8");
    for (const [k, v] of pairs) expect(unit.split("\n")).toContain(`Environment=${k}=${v}`);
  });

  it("is the one docs/operating.md tells users to export", async () => {
    const doc = await readFile("docs/operating.md", "utf8");
    for (const [k, v] of pairs) expect(doc).toContain(`export ${k}=${v}`);
  });

  it("is what the benchmark's --image-malloc runs the CLI with", () => {
    const on = parseBenchArgs(["--million", "--image-malloc"]);
    const off = parseBenchArgs(["--million"]);
    expect(on !== "help" && on.million?.imageMalloc).toBe(true);
    expect(off !== "help" && off.million?.imageMalloc).toBe(false);
  });
});
