/**
 * The plan file's one writer (src/plan/write.ts): the JSON view and the file are the same bytes, those of the signed
 * plan pretty-printed, and a write that fails leaves the previous file whole, with no temporary file beside it.
 */
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPlannedChange } from "../../src/actions/index.js";
import { withDigest } from "../../src/plan/digest.js";
import { loadPlanFile } from "../../src/plan/read.js";
import type { Plan } from "../../src/plan/types.js";
import { planFileText, writePlanFile } from "../../src/plan/write.js";
import { PLAN_FORMATS } from "../../src/render/plan/index.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { makePlan, tempDir } from "../apply/helpers.js";

let sb: RunningSandbox;
let dir: string;
let plan: Plan;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 150, seed: 11 });
  dir = await tempDir();
  ({ plan } = await makePlan(sb, dir, await readFile(new URL("../../rules/expenses.yaml", import.meta.url), "utf8")));
});
afterAll(async () => {
  await sb.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the plan writer", () => {
  it("writes the bytes of the JSON view, which are the signed plan pretty-printed, and reads back the same plan", async () => {
    const many = Array.from({ length: 120 }, (_, i) => ({
      ...plan.changes[i % plan.changes.length]!,
      id: `many:${i}`,
    }));
    for (const p of [plan, { ...plan, changes: [] }, { ...plan, changes: many }]) {
      const file = join(dir, "out.json");
      const signed = await writePlanFile(file, p);
      const text = await readFile(file, "utf8");
      expect(text).toBe(`${JSON.stringify(withDigest(p), null, 2)}\n`);
      expect(PLAN_FORMATS.json(p, { color: false })).toBe(text);
      expect(planFileText(p)).toBe(text);
      const read = await loadPlanFile(file, sb.baseUrl, checkPlannedChange);
      expect(read.digest).toBe(signed.digest);
      expect(read.plan).toEqual(JSON.parse(text));
      // `show --format json`: the plan read back is shown as the very bytes of its file
      expect(PLAN_FORMATS.json(read.plan, { color: false })).toBe(text);
    }
  });

  it("leaves the previous file whole when a write fails half-way, and no temporary file", async () => {
    const sub = join(dir, "atomic");
    await rm(sub, { recursive: true, force: true });
    await import("node:fs/promises").then((fs) => fs.mkdir(sub));
    const file = join(sub, "plan.json");
    await writeFile(file, "the previous plan\n");
    // a change that cannot be written, past the first batch: the file would be half-written without the rename
    const poisoned = Array.from({ length: 80 }, (_, i) => ({ ...plan.changes[0]!, id: `p:${i}` }));
    // the digest reads it once (fine), the writer's second read fails: the failure comes while the file is written
    let reads = 0;
    const good = { ...poisoned[70]! };
    const poison = Object.assign(
      { ...good },
      {
        toJSON: (): unknown => {
          if (++reads > 1) throw new Error("disk full");
          return good;
        },
      },
    );
    poisoned[70] = poison;
    await expect(writePlanFile(file, { ...plan, changes: poisoned })).rejects.toThrow(/disk full/);
    expect(await readFile(file, "utf8")).toBe("the previous plan\n");
    expect(await readdir(sub)).toEqual(["plan.json"]);
  });
});
