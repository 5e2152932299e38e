/**
 * The state is authenticated (DESIGN.md section 14, "Trust"; src/state/mac.ts): nothing is planned from a value that
 * did not verify. A state edited (the tampered-cache attack of issue 33: cached amounts lowered so that "approve under
 * 150" approves big claims), with a line removed, without its MAC line, with a MAC of another key, claiming another
 * key, or edited after the run opened it, plans exactly what a stateless run plans, with one warning naming the file;
 * the next state is written fresh and used. Against the sandbox over loopback HTTP.
 */
import { lstatSync, readlinkSync } from "node:fs";
import { readFile, readdir, symlink, writeFile } from "node:fs/promises";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { runPlan } from "../../src/engine/plan-live.js";
import { loadRules } from "../../src/rules/index.js";
import type { RuleSet } from "../../src/rules/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { openRunState, readInFull, StateNotWritten, type StateSettings } from "../../src/state/index.js";
import { stateKey } from "../../src/state/mac.js";
import { STATE_FILE } from "../../src/state/schema.js";
import { StateWriter } from "../../src/state/writer.js";
import type { Plan } from "../../src/plan/types.js";
import { closeAfterAll, tempDir } from "../helpers/temp.js";
import { client, comparable, statelessPlan } from "./helpers.js";

const KEY = "sandbox-admin";
const AMOUNT = 50222;
const CURRENCY = 50223;

let sb: RunningSandbox;
let rules: RuleSet;

beforeAll(async () => {
  sb = closeAfterAll(await startSandbox({ port: 0, instances: 700, seed: 33 }));
  const dir = await tempDir("flowrules-trust-rules-");
  // the rule of the attack: approve EUR claims under 150 that wait on the manager
  await writeFile(
    join(dir, "approve.yaml"),
    `version: 1
rules:
  - name: approve-under-150
    workflow: 1042
    fields:
      amount: { step: Manager approval, action: Amount }
      currency: { step: Manager approval, action: Currency }
    select: { status: [running], active_step_id: 20111, tags: [expenses] }
    when: fields.amount < 150 and fields.currency = "EUR"
    actions:
      - complete_step: { step: 20111, inputs: [{ action: 50230, value: { inputValue: "Approved" } }] }
`,
  );
  const loaded = await loadRules([fileURLToPath(new URL("../../rules/", import.meta.url)), dir]);
  if (!loaded.ruleSet) throw new Error("rules did not load");
  rules = loaded.ruleSet;
});

interface Run {
  plan: Plan;
  warnings: string[];
  fromState: number;
  written: boolean;
}

/** A run with state as `plan --state` makes it; `afterOpen` runs once the state is open (and verified), before planning. */
async function stateful(
  settings: StateSettings,
  opts: { apiKey?: string; afterOpen?: () => Promise<void> } = {},
): Promise<Run> {
  const c = client(sb);
  const warnings: string[] = [];
  const now = sb.store.now();
  try {
    const run = await openRunState(settings, {
      baseUrl: c.baseUrl,
      apiKey: opts.apiKey ?? KEY,
      now,
      rules: rules.rules,
      version: "test",
      warn: (m) => warnings.push(m),
    });
    try {
      await opts.afterOpen?.();
      const plan = await runPlan({
        client: run.wrap(c),
        ruleSet: rules,
        now,
        optOutTag: "no-automation",
        onWarning: (m) => warnings.push(m),
      });
      let written = false;
      if (readInFull(plan)) {
        try {
          await run.commit();
          written = true;
        } catch (err) {
          if (!(err instanceof StateNotWritten)) throw err;
        }
      }
      return { plan, warnings, fromState: run.counts()?.fromState ?? 0, written };
    } finally {
      await run.release();
    }
  } finally {
    await c.close();
  }
}

interface ValueLine {
  value: { f: [number, number, number]; id: number; v: { value: { inputValue?: unknown } } | null };
}

/** Instances the attack aims at: in the rule's selection (their currency was read for it), EUR, claiming 150 or more. */
function targets(lines: string[]): number[] {
  const values = lines.filter((l) => l.startsWith('{"value":')).map((l) => JSON.parse(l) as ValueLine);
  const eur = new Set(
    values
      .filter((v) => v.value.f[2] === CURRENCY && String(JSON.stringify(v.value.v?.value.inputValue)).includes('"EUR"'))
      .map((v) => v.value.id),
  );
  return values
    .filter((v) => v.value.f[2] === AMOUNT && eur.has(v.value.id) && Number(v.value.v?.value.inputValue) >= 150)
    .map((v) => v.value.id)
    .slice(0, 12);
}

/** Every cached Amount of `ids` set to 1, as issue 33's attacker did (437.02 → 1). */
function lowered(lines: string[], ids: readonly number[]): string[] {
  return lines.map((l) => {
    if (!l.startsWith('{"value":')) return l;
    const v = JSON.parse(l) as ValueLine;
    if (v.value.f[2] !== AMOUNT || !ids.includes(v.value.id) || !v.value.v) return l;
    v.value.v.value.inputValue = 1;
    return JSON.stringify(v);
  });
}

/** The file with a new last line: its line count and a MAC of every byte before it under `apiKey`. */
function resealed(lines: string[], apiKey: string): string {
  const body = lines.filter((l) => l !== "" && !l.startsWith('{"end":'));
  const text = body.map((l) => `${l}\n`).join("");
  const mac = createHmac("sha256", stateKey(apiKey).mac).update(text).digest("hex");
  return `${text}${JSON.stringify({ end: { lines: body.length, mac } })}\n`;
}

function changesOf(plan: Plan, ids: readonly number[]): number[] {
  return plan.changes.map((c) => c.instance_id).filter((id) => ids.includes(id));
}

function stateWarnings(run: Run): string[] {
  return run.warnings.filter((w) => w.startsWith("state: "));
}

describe("a tampered state", () => {
  it("never changes a plan: edited, a line removed, no MAC line, another key's MAC or id — one warning each, then a fresh state", async () => {
    const cases: Array<[string, (lines: string[], ids: number[]) => string, RegExp]> = [
      // the attack: amounts lowered; the MAC no longer verifies
      ["amounts lowered to 1", (lines, ids) => lowered(lines, ids).join("\n"), /does not verify/],
      // the attacker recounts the lines but cannot make the MAC
      [
        "a line removed, the count fixed",
        (lines) => {
          const at = lines.findIndex((l) => l.startsWith('{"value":'));
          const end = JSON.parse(lines[lines.length - 2] ?? "{}") as { end: { lines: number; mac: string } };
          return [
            ...lines.slice(0, at),
            ...lines.slice(at + 1, -2),
            JSON.stringify({ end: { ...end.end, lines: end.end.lines - 1 } }),
            "",
          ].join("\n");
        },
        /does not verify/,
      ],
      [
        "the MAC line removed",
        (lines) => lines.slice(0, -2).join("\n") + "\n",
        /is not whole \(truncated: no last line\)/,
      ],
      [
        "amounts lowered and sealed with another key",
        (lines, ids) => resealed(lowered(lines, ids), "a-key-of-my-own"),
        /does not verify/,
      ],
      [
        "the MAC altered",
        (lines) => lines.join("\n").replace(/"mac":"(.)/, (_, c: string) => `"mac":"${c === "0" ? "1" : "0"}`),
        /does not verify/,
      ],
      [
        "claiming another key, sealed with it",
        (lines, ids) => {
          const header = JSON.parse(lines[0] ?? "{}") as Record<string, unknown>;
          return resealed(
            [
              JSON.stringify({ ...header, key_digest: stateKey("a-key-of-my-own").id }),
              ...lowered(lines, ids).slice(1),
            ],
            "a-key-of-my-own",
          );
        },
        /was made with another API key/,
      ],
    ];
    const dir = await tempDir("flowrules-trust-");
    const settings = { dir, resyncAfterMs: 24 * 3_600_000, fullRefresh: false };
    const file = join(dir, STATE_FILE);
    await stateful(settings);
    const pristine = (await readFile(file, "utf8")).split("\n");
    const ids = targets(pristine);
    expect(ids.length).toBeGreaterThan(3);
    const stateless = await statelessPlan(sb, rules, sb.store.now());
    for (const [what, tamper, warning] of cases) {
      await writeFile(file, tamper(pristine, ids));
      const run = await stateful(settings);
      expect(comparable(run.plan), what).toEqual(comparable(stateless.plan));
      expect(changesOf(run.plan, ids), what).toEqual([]);
      expect(stateWarnings(run), what).toEqual([
        expect.stringMatching(
          new RegExp(
            `^state: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} ${warning.source}.*: this run reads everything and rewrites it$`,
          ),
        ),
      ]);
      expect(run.fromState, what).toBe(0);
      expect(run.written, what).toBe(true);
    }
    // the last state written verifies: the next run uses it, without a warning
    const next = await stateful(settings);
    expect(stateWarnings(next)).toEqual([]);
    expect(next.fromState).toBeGreaterThan(50);
  }, 120_000);

  it("edited after the run opened it (and verified it): the lines that changed are not used, one warning", async () => {
    const dir = await tempDir("flowrules-trust-");
    const settings = { dir, resyncAfterMs: 24 * 3_600_000, fullRefresh: false };
    const file = join(dir, STATE_FILE);
    await stateful(settings);
    const text = await readFile(file, "utf8");
    const ids = targets(text.split("\n"));
    expect(ids.length).toBeGreaterThan(3);
    // the same bytes but the amounts: 437.02 → 1.0000, same length, so every line stays where it was
    const edited = text
      .split("\n")
      .map((l) => {
        const m = /^\{"value":\{"f":\[1042,20111,50222\],"id":(\d+),.*?"inputValue":([0-9.]+)/.exec(l);
        if (!m || !ids.includes(Number(m[1]))) return l;
        const n = m[2] as string;
        return l.replace(`"inputValue":${n}`, `"inputValue":${`1.${"0".repeat(n.length - 2)}`.slice(0, n.length)}`);
      })
      .join("\n");
    expect(edited.length).toBe(text.length);
    expect(edited).not.toBe(text);
    const stateless = await statelessPlan(sb, rules, sb.store.now());
    const run = await stateful(settings, { afterOpen: () => writeFile(file, edited) });
    expect(comparable(run.plan)).toEqual(comparable(stateless.plan));
    expect(changesOf(run.plan, ids)).toEqual([]);
    expect(stateWarnings(run)).toEqual([
      `state: ${file} changed while this run used it: its lines that changed are not used, the service answers them`,
    ]);
    // what it used was verified or read afresh: the state it wrote is whole, verifies, and holds the true amounts
    expect(run.fromState).toBeGreaterThan(50);
    const next = await stateful(settings);
    expect(stateWarnings(next)).toEqual([]);
    expect(next.fromState).toBeGreaterThan(50);
    expect(targets((await readFile(file, "utf8")).split("\n")).sort()).toEqual([...ids].sort());
  }, 60_000);
});

describe("the state's temporary file", () => {
  it("never follows a link planted at its name: the link's target is left untouched", async () => {
    const dir = await tempDir("flowrules-trust-");
    const outside = await tempDir("flowrules-trust-target-");
    const target = join(outside, "precious.txt");
    await writeFile(target, "precious\n");
    const dangling = join(outside, "not-there.txt");
    const key = stateKey(KEY);
    const header = {
      format: "flowrules-state" as const,
      format_version: 3,
      flowrules_version: "test",
      base_url: sb.baseUrl,
      key_digest: key.id,
      written_at: new Date().toISOString(),
      run_at: new Date().toISOString(),
      rules: {},
    };
    for (const to of [target, dangling]) {
      const temp = join(dir, `${STATE_FILE}.${process.pid}.tmp`);
      await symlink(to, temp);
      const writer = new StateWriter(dir, header, { describe: String, key });
      writer.line(JSON.stringify({ value: { f: [1042, 20111, AMOUNT], id: 1, v: null } }));
      await writer.commit({});
      expect(await readFile(target, "utf8")).toBe("precious\n");
      expect(await readdir(outside)).toEqual(["precious.txt"]);
      expect(lstatSync(join(dir, STATE_FILE)).isFile()).toBe(true);
      expect(await readdir(dir)).toEqual([STATE_FILE]);
    }
    // and a run with state, with links planted for it: the state is written, the target untouched
    await symlink(target, join(dir, `${STATE_FILE}.${process.pid}.tmp`));
    await symlink(target, join(dir, `${STATE_FILE}.1.tmp`));
    const run = await stateful({ dir, resyncAfterMs: 3_600_000, fullRefresh: false });
    expect(run.written).toBe(true);
    expect(await readFile(target, "utf8")).toBe("precious\n");
    expect(await readdir(dir)).toEqual([STATE_FILE]);
    expect(() => readlinkSync(join(dir, STATE_FILE))).toThrow();
  }, 60_000);
});
