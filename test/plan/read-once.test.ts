/**
 * The plan reader reads a file flowrules wrote once (src/plan/read.ts), and a file with its keys in another order
 * twice (the second time its changes only, for the hash). Opens of the file are counted through node:fs itself.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { checkPlannedChange } from "../../src/actions/index.js";
import { loadPlanFile } from "../../src/plan/read.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { makePlan, MIXED_RULES, tempDir } from "../apply/helpers.js";

const opened = vi.hoisted(() => [] as string[]);
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  return {
    ...fs,
    createReadStream: (path: string, options?: Parameters<typeof fs.createReadStream>[1]) => {
      opened.push(String(path));
      return fs.createReadStream(path, options);
    },
  };
});

let sb: RunningSandbox;
let file: string;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 60, seed: 9 });
  dir = await tempDir();
  ({ file } = await makePlan(sb, dir, MIXED_RULES));
});
afterAll(async () => {
  await sb.close();
});

describe("the plan reader's reads", () => {
  it("reads a plan flowrules wrote once", async () => {
    opened.length = 0;
    const read = await loadPlanFile(file, sb.baseUrl, checkPlannedChange, { compact: true });
    expect(read.plan.changes.length).toBeGreaterThan(0);
    expect(opened).toEqual([file]);
  });

  it("reads the changes again when a key sorting before them comes after them", async () => {
    const raw = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
    const { base_url, ...rest } = raw;
    const moved = join(dir, "moved.json");
    await writeFile(moved, JSON.stringify({ ...rest, base_url }));
    opened.length = 0;
    const read = await loadPlanFile(moved, sb.baseUrl, checkPlannedChange);
    expect(read.digest).toBe(raw.digest);
    expect(opened).toEqual([moved, moved]);
  });
});
