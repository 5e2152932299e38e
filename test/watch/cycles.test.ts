/** The watcher's cycle folders (src/watch/cycles.ts): what is resumed, listed and pruned, on a real folder. */
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cycleDir, cycleFolders, pruneCycles, setAside, unfinishedCycles } from "../../src/watch/cycles.js";
import { tempDir } from "../helpers/temp.js";

/** A cycle folder with a plan and, when `done`, a journal whose last run finished. */
async function cycle(cycles: string, i: number, done: boolean): Promise<string> {
  const dir = cycleDir(cycles, `2026-11-27T12:00:${String(i).padStart(2, "0")}.000Z`, i, 4242);
  await mkdir(dir, { recursive: true });
  const plan = join(dir, "plan.json");
  await writeFile(plan, "{}");
  if (done) {
    const at = "2026-11-27T12:00:00.000Z";
    const start = { event: "start", plan: "sha256:0", at, pid: 4242, host: "test" };
    const finish = { event: "finish", at, applied: 0, stale: 0, failed: 0, not_acted: 0 };
    await writeFile(`${plan}.journal.jsonl`, `${JSON.stringify(start)}\n${JSON.stringify(finish)}\n`);
  }
  return plan;
}

describe("cycle folders", () => {
  it("folders set aside are never resumed nor listed, whatever their number, and only the newest `keep` of them stay", async () => {
    const cycles = join(await tempDir("flowrules-cycles-"), "cycles");
    const setAsideFolders: string[] = [];
    for (let i = 0; i < 7; i++) setAsideFolders.push(await setAside(await cycle(cycles, i, false)));
    // a folder set aside twice over gets `.corrupt.2`: still not a cycle
    await mkdir(`${setAsideFolders[6]?.replace(/\.corrupt$/, "")}`);
    await writeFile(join(`${setAsideFolders[6]?.replace(/\.corrupt$/, "")}`, "plan.json"), "{");
    const second = await setAside(join(`${setAsideFolders[6]?.replace(/\.corrupt$/, "")}`, "plan.json"));
    expect(second).toMatch(/\.corrupt\.2$/);
    const live = await cycle(cycles, 30, false);
    expect(await unfinishedCycles(cycles)).toEqual([live]);
    expect((await cycleFolders(cycles)).map((c) => c.planFile)).toEqual([live]);

    await pruneCycles(cycles, 3);
    const left = (await readdir(cycles)).sort();
    // the unfinished cycle stays; of the eight set aside, the newest three
    expect(left.filter((n) => /\.corrupt/.test(n))).toHaveLength(3);
    expect(left).toContain(second.split("/").at(-1));
    expect(left).toContain(live.split("/").at(-2));
  });

  it("finished cycles beyond `keep` are removed oldest first; unfinished ones stay until resumed", async () => {
    const cycles = join(await tempDir("flowrules-cycles-"), "cycles");
    const plans: string[] = [];
    for (let i = 0; i < 6; i++) plans.push(await cycle(cycles, i, i !== 1));
    await pruneCycles(cycles, 2);
    const left = (await cycleFolders(cycles)).map((c) => c.planFile);
    expect(left).toEqual([plans[1], plans[4], plans[5]]);
  });
});
