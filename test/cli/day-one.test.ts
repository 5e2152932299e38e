/**
 * Day one (docs/design.md, "Names in a plan"; DESIGN section 16): the starter rules against the sandbox, as the
 * README's five-minute tour runs them. A plan names workflows, steps and fields beside their ids and says why
 * matches need no change; `plan --out` ends with the command to run next; `apply plan.json` and `apply
 * --auto-approve` list the changes they applied, alike; a plan file written before names existed still applies.
 * Commands run in-process against sandboxes of the demo data (the default seed, as the tour's).
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planCommand, type PlanCommandOptions } from "../../src/commands/plan.js";
import { withDigest } from "../../src/plan/digest.js";
import type { Plan } from "../../src/plan/types.js";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { captureIO, connection, posts, runApply } from "../apply/helpers.js";
import { tempDir } from "../helpers/temp.js";

const RULES = fileURLToPath(new URL("../../rules", import.meta.url));

let viaFile: RunningSandbox;
let viaAuto: RunningSandbox;
let dir: string;
beforeAll(async () => {
  [viaFile, viaAuto] = await Promise.all([startSandbox({ port: 0 }), startSandbox({ port: 0 })]);
  dir = await tempDir("flowrules-day-one-");
});
afterAll(async () => {
  await Promise.all([viaFile?.close(), viaAuto?.close()]);
});

async function plan(
  sb: RunningSandbox,
  over: Partial<PlanCommandOptions> = {},
): Promise<{ code: number; out: string; err: string }> {
  const io = captureIO();
  const code = await planCommand(
    {
      paths: [RULES],
      format: "text",
      detailedExitcode: false,
      rules: [],
      quiet: false,
      connection: connection(sb),
      ...over,
    },
    io,
  );
  return { code, out: io.out(), err: io.err() };
}

/** The `Applied (n):` section of an apply summary. */
function appliedSection(summary: string): string[] {
  const lines = summary.split("\n");
  const at = lines.findIndex((l) => /^Applied \(\d+\):$/.test(l));
  if (at < 0) return [];
  const rest = lines.slice(at + 1);
  const end = rest.findIndex((l) => !l.startsWith("  "));
  return [lines[at] ?? "", ...rest.slice(0, end < 0 ? rest.length : end)];
}

describe("day one: a plan in names, its next step, and what apply did", () => {
  it("plan --out names workflows, steps and fields, and ends with the command that applies exactly it", async () => {
    const file = join(dir, "my plan.json");
    const r = await plan(viaFile, { out: file });
    expect(r.code).toBe(0);
    expect(r.out).toContain("Rule auto-approve-small-expenses (workflow 1042 Expense claim):");
    expect(r.out).toContain("Rule abort-abandoned-onboardings (workflow 1043 Employee onboarding):");
    expect(r.out).toMatch(
      /: complete step 20111 "Manager approval"\n {6}step 20111 "Manager approval": "active" → "completed"\n {6}Manager comment \(50230\): set to "Approved by rule/,
    );
    expect(r.out).toMatch(/save step 20131 "Budget approval"\n {6}Comment \(50264\): "[^"]*" → "Large order/);
    // the last line on stderr, the path quoted for the shell (it holds a space)
    expect(r.err.trimEnd().split("\n").at(-1)).toBe(
      `Saved the plan to ${file}. Apply exactly this: flowrules apply '${file}'`,
    );
    // the JSON keeps its ids; the names ride along in `names`
    const saved = JSON.parse(await readFile(file, "utf8")) as Plan;
    expect(saved.names).toEqual([
      {
        workflow_id: 1042,
        name: "Expense claim",
        steps: { "20111": "Manager approval" },
        fields: { "50230": "Manager comment", "50231": "Approved on" },
      },
      { workflow_id: 1043, name: "Employee onboarding" },
      {
        workflow_id: 1044,
        name: "Purchase request",
        steps: { "20131": "Budget approval" },
        fields: { "50264": "Comment" },
      },
    ]);
    expect(saved.changes.every((c) => !JSON.stringify(c).includes("Manager approval"))).toBe(true);
  });

  it("apply plan.json and apply --auto-approve list the changes they applied, line for line alike", async () => {
    const file = join(dir, "my plan.json");
    const io = captureIO();
    expect(await runApply(viaFile, dir, { paths: [file] }, io), io.err()).toBe(2);
    const fromFile = appliedSection(io.out());
    const planned = (JSON.parse(await readFile(file, "utf8")) as Plan).changes.length;
    expect(posts(viaFile).length).toBeGreaterThan(0);
    expect(fromFile[0]).toBe(`Applied (${planned}):`);
    expect(fromFile).toHaveLength(planned + 1);
    expect(fromFile).toContain('  ✓ #100071 complete step 20111 "Manager approval" (rule auto-approve-small-expenses)');
    expect(fromFile).toContain("  ✗ #100069 abort (rule abort-abandoned-onboardings)");
    expect(
      fromFile.filter((l) => l.includes('save step 20131 "Budget approval" (rule note-large-purchases)')).length,
    ).toBeGreaterThan(0);
    // in plan order: rule by rule as the plan lists them
    const rules = fromFile.slice(1).map((l) => /\(rule ([\w-]+)\)$/.exec(l)?.[1]);
    expect(rules.indexOf("abort-abandoned-onboardings")).toBeGreaterThan(
      rules.lastIndexOf("auto-approve-small-expenses"),
    );

    const auto = captureIO();
    const autoDir = await tempDir("flowrules-day-one-auto-");
    expect(await runApply(viaAuto, autoDir, { paths: [RULES], autoApprove: true }, auto), auto.err()).toBe(2);
    expect(appliedSection(auto.out())).toEqual(fromFile);
  });

  it("after the apply, every plan view says why the save rule's matches need no change", async () => {
    const text = await plan(viaFile);
    const m =
      /Rule note-large-purchases \(workflow 1044 Purchase request\): \d+ selected, (\d+) matched, 0 changes, \1 skipped\n {2}\1 skipped: the step already holds these values\n/.exec(
        text.out,
      );
    expect(m, text.out).not.toBeNull();
    const n = Number(m?.[1]);
    expect(n).toBeGreaterThan(0);
    const md = await plan(viaFile, { format: "markdown" });
    expect(md.out).toContain(`- \`note-large-purchases\`: ${n} skipped: the step already holds these values`);
    const html = await plan(viaFile, { format: "html" });
    expect(html.out).toContain(
      `<li><code>note-large-purchases</code>: ${n} skipped: the step already holds these values</li>`,
    );
    const json = JSON.parse((await plan(viaFile, { format: "json" })).out) as Plan;
    expect(json.rules.find((r) => r.name === "note-large-purchases")?.skipped_by_reason).toEqual({
      "the step already holds these values": n,
    });
    expect(json.summary.skipped).toBe(json.rules.reduce((n, r) => n + r.skipped, 0));
  });

  it("a plan file written before names and skip reasons loads, applies, and shows ids alone", async () => {
    const sb = await startSandbox({ port: 0 });
    try {
      const file = join(dir, "old-plan.json");
      expect((await plan(sb, { out: file, rules: ["abort-abandoned-onboardings"] })).code).toBe(0);
      const {
        digest: _digest,
        names: _names,
        ...rest
      } = JSON.parse(await readFile(file, "utf8")) as Plan & { digest: string };
      const old: Plan = {
        ...rest,
        summary: Object.fromEntries(Object.entries(rest.summary).filter(([k]) => k !== "skipped")) as Plan["summary"],
      };
      for (const r of old.rules) {
        delete r.skipped_by_reason;
        delete r.fields;
      }
      await writeFile(file, `${JSON.stringify(withDigest(old), null, 2)}\n`);
      const io = captureIO();
      expect(await runApply(sb, dir, { paths: [file] }, io), io.err()).toBe(2);
      const lines = appliedSection(io.out());
      expect(lines.length).toBeGreaterThan(1);
      for (const l of lines.slice(1)) expect(l).toMatch(/^ {2}✗ #\d+ abort \(rule abort-abandoned-onboardings\)$/);
    } finally {
      await sb.close();
    }
  });
});
