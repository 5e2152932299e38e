/**
 * The listings cache answers page by page (src/state/cached-pages.ts): a cached listing of many pages, replayed
 * (nothing changed, or a question it cannot slice) or brought up to date by slices (less what changed, plus what the
 * moved bounds swept), gives page for page what the service gives at the same moment — each page's elements and
 * count — over random people's work and clock moves, many seeds; a caller that stops after a few pages still leaves
 * the whole answer for the next run; a line edited under a run after some pages were given is not used, and the rest
 * comes from the service. Against the sandbox over loopback HTTP.
 */
import { open, readFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ApiClient, InstanceListItem, InstanceListQuery } from "../../src/api/index.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { type StateSettings } from "../../src/state/index.js";
import { STATE_FILE } from "../../src/state/schema.js";
import { tempDir } from "../helpers/temp.js";
import { client, openTestRun } from "./helpers.js";

const START = new Date("2026-06-15T12:00:00.000Z");
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const iso = (t: number): string => new Date(t).toISOString();

interface Question {
  pid: number;
  query: InstanceListQuery;
  /** the caller reads this many pages, then stops */
  stopAfter?: number;
}

/** Questions as a run asks them at `now`: relative bounds resolved against it, so they move with the clock. */
function questions(now: number): Question[] {
  return [
    { pid: 1042, query: { status: ["running"] } },
    { pid: 1042, query: { last_updated_time_before: iso(now - 2 * DAY) } },
    { pid: 1042, query: { status: ["running", "completed"], last_updated_time_after: iso(now - 20 * DAY) } },
    { pid: 1043, query: { deadline_before: iso(now) } },
    { pid: 1044, query: {} },
    // not sliceable: replayed page by page when nothing changed, else asked again
    { pid: 1042, query: { status: ["running"], page_size: 40 } },
    { pid: 1044, query: { ordering: "-started_time", page_size: 70 } },
    // a caller that stops early (one rule's stream cut short)
    { pid: 1045, query: {}, stopAfter: 1 },
    { pid: 1042, query: { page_size: 25 }, stopAfter: 3 },
  ];
}

interface Answer {
  count: number | null;
  results: InstanceListItem[];
}

async function pagesOf(c: ApiClient, q: Question, onPage?: (n: number) => Promise<void>): Promise<Answer[]> {
  const out: Answer[] = [];
  for await (const page of c.instancePages(q.pid, q.query)) {
    out.push({ count: page.count, results: page.results });
    await onPage?.(out.length);
    if (q.stopAfter !== undefined && out.length >= q.stopAfter) break;
  }
  return out;
}

/** One run with state: every question through the state client, then the state written. */
async function statefulAnswers(
  sb: RunningSandbox,
  settings: StateSettings,
  qs: Question[],
  onPage?: (n: number) => Promise<void>,
): Promise<{ answers: Answer[][]; warnings: string[] }> {
  const c = client(sb);
  const warnings: string[] = [];
  try {
    const run = await openTestRun(settings, c.baseUrl, sb.store.now(), [], { warn: (m) => warnings.push(m) });
    try {
      const wrapped = run.wrap(c);
      const answers: Answer[][] = [];
      for (const q of qs) answers.push(await pagesOf(wrapped, q, onPage));
      await run.commit();
      return { answers, warnings };
    } finally {
      await run.release();
    }
  } finally {
    await c.close();
  }
}

async function statelessAnswers(sb: RunningSandbox, qs: Question[]): Promise<Answer[][]> {
  const c = client(sb);
  try {
    const answers: Answer[][] = [];
    for (const q of qs) answers.push(await pagesOf(c, q));
    return answers;
  } finally {
    await c.close();
  }
}

const round = fc.record({
  changes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 40 })),
  minutes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 60, max: 4 * 24 * 60 })),
});

describe("cached listings, page by page", () => {
  it("replayed and sliced listings of many pages give page for page what the service gives (many seeds)", async () => {
    let pagesCompared = 0;
    let longest = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(round, { minLength: 2, maxLength: 4 }),
        async (seed, rounds) => {
          const sb = await startSandbox({ port: 0, instances: 2_500, seed, now: START });
          try {
            const settings = { dir: await tempDir("flowrules-pages-"), resyncAfterMs: 30 * DAY, fullRefresh: false };
            await statefulAnswers(sb, settings, questions(sb.store.now().getTime()));
            for (const [n, r] of rounds.entries()) {
              if (r.changes > 0) sb.simulate({ seed: seed + n, changes: r.changes });
              sb.advanceClock(r.minutes * MINUTE);
              const qs = questions(sb.store.now().getTime());
              const expected = await statelessAnswers(sb, qs);
              const got = await statefulAnswers(sb, settings, qs);
              expect(got.warnings, `seed ${seed}, round ${n + 1}`).toEqual([]);
              for (const [i, q] of qs.entries()) {
                expect(got.answers[i], `seed ${seed}, round ${n + 1}, ${JSON.stringify(q)}`).toEqual(expected[i]);
                pagesCompared += expected[i]?.length ?? 0;
                longest = Math.max(longest, expected[i]?.length ?? 0);
              }
            }
          } finally {
            await sb.close();
          }
        },
      ),
      { numRuns: 10 },
    );
    // the listings compared were long: many pages each
    expect(longest).toBeGreaterThanOrEqual(12);
    expect(pagesCompared).toBeGreaterThan(500);
  }, 240_000);

  it("a line edited under the run after some pages were given: not used, the rest from the service, one warning", async () => {
    const sb = await startSandbox({ port: 0, instances: 2_500, seed: 7, now: START });
    try {
      const dir = await tempDir("flowrules-pages-");
      const settings = { dir, resyncAfterMs: 30 * DAY, fullRefresh: false };
      const now = (): number => sb.store.now().getTime();
      // a long listing (brought up to date by slices: its bound moves with the clock)
      const asked = (): Question[] => [{ pid: 1042, query: { last_updated_time_before: iso(now() - 2 * DAY) } }];
      await statefulAnswers(sb, settings, asked());
      sb.simulate({ seed: 8, changes: 10 });
      sb.advanceClock(5 * MINUTE);
      const file = join(dir, STATE_FILE);
      const lines = (await readFile(file, "utf8")).split("\n");
      const items = lines.filter((l) => l.startsWith('{"item":'));
      expect(items.length).toBeGreaterThan(1_000);
      // an element of its second page (500 a page) edited in place once the first page was given: the same length,
      // so every line stays where it was
      const line = items[700] as string;
      const at = Buffer.byteLength(lines.slice(0, lines.indexOf(line)).join("\n")) + 1;
      const edited = line.replace(/"name":"(.)/, (_m, c: string) => `"name":"${c === "X" ? "Y" : "X"}`);
      expect(edited).not.toBe(line);
      expect(Buffer.byteLength(edited)).toBe(Buffer.byteLength(line));
      const expected = await statelessAnswers(sb, asked());
      const got = await statefulAnswers(sb, settings, asked(), async (page) => {
        if (page !== 1) return;
        const fh = await open(file, "r+");
        try {
          await fh.write(edited, at);
        } finally {
          await fh.close();
        }
      });
      expect(got.answers).toEqual(expected);
      expect(expected[0]?.length).toBeGreaterThanOrEqual(3);
      expect(got.warnings).toHaveLength(1);
      expect(got.warnings[0]).toMatch(/changed/);
    } finally {
      await sb.close();
    }
  }, 60_000);
});
