/**
 * Escaping by medium (issue 28, point 3): instance names, tags, workflow and folder names from the service, and
 * report titles from rule files, carry terminal escapes and markup. No view obeys them: text shows controls visibly
 * (only the view's own colours reach the terminal), Markdown and HTML show markup as text, the chat text escapes
 * Slack's `<…>`. The service is the sandbox behind a loopback proxy that renames the workflow and its folder.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import { planPayload } from "../../src/render/notify/payload.js";
import { terminalSafe } from "../../src/render/escape.js";
import { PLAN_FORMATS } from "../../src/render/plan/index.js";
import { loadPlanFile } from "../../src/plan/read.js";
import { runCli } from "../helpers/cli.js";
import { captureIO, makePlan, runApply } from "../apply/helpers.js";
import { startHostileProxy, type HostileProxy, type Hostility } from "../hardening/hostile-proxy.js";
import { tempDir } from "../helpers/temp.js";

/** Erases the line above and climbs onto it; then closes a Markdown block and adds an image; mentions; bidi. */
const EVIL =
  "Evil\u001b[2K\u001b[1A\u001b[8m Plan: no changes.\r\u0007\u009b2J </details><img src=x> @octo-org/team [x](http://e) \u202egnp.exe";

const RULES = `version: 1
rules:
  - name: approve-expenses
    workflow: 1042
    select: { status: [running], active_step_id: 20111 }
    actions:
      - complete_step:
          step: 20111
          inputs:
            - action: 50230
              value: { inputValue: "Approved" }
  - name: tagged
    workflow: 1042
    select: { status: [running] }
    actions:
      - report: { title: ${JSON.stringify(EVIL)}, group_by: tags, columns: [id, name, tags] }
`;

let sb: RunningSandbox;
let proxy: HostileProxy;
let dir: string;
let env: Record<string, string>;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, instances: 80, seed: 3 });
  for (const id of sb.store.ids(1042)) {
    sb.store.update(
      id,
      (i) => {
        i.name = `${EVIL} ${id}`;
        i.tags.push(EVIL);
      },
      { touch: false },
    );
  }
  proxy = await startHostileProxy(sb.origin);
  proxy.setRule(renaming);
  dir = await tempDir("flowrules-escaping-");
  await writeFile(join(dir, "rules.yaml"), RULES);
  env = { FLOWRULES_BASE_URL: proxy.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" };
});
afterAll(async () => {
  await proxy?.close();
  await sb?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The workflow, its folder, a step and a field renamed in every answer that names them (plans show all four). */
function renaming(): Hostility {
  const names: Array<[string, string]> = [
    ["Expense claim", EVIL],
    ["Finance", `${EVIL} folder`],
    ["Manager approval", `${EVIL} step`],
    ["Manager comment", `${EVIL} field`],
  ];
  return {
    answer: (up) => ({
      ...up,
      body: names.reduce((b, [from, to]) => b.replaceAll(JSON.stringify(from), JSON.stringify(to)), up.body),
    }),
  };
}

/** Any ESC that is not one of the views' colours, any other C0/C1 control but newline, any bidi override. */
const OBEYED =
  /\u001b(?!\[(?:1|2|22|31|32|33|36|39)m)|[\u0000-\u0009\u000b-\u001a\u001c-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function expectTerminalSafe(out: string, what: string): void {
  expect(out, what).toContain("Evil");
  expect(out, what).not.toMatch(OBEYED);
  expect(out, what).toContain("\\x1b[2K");
}

function expectMarkupSafe(out: string, what: string): void {
  expect(out, what).toContain("Evil");
  expect(out, what).not.toMatch(/<img|@octo-org|\]\(http/);
  expect(out, what).not.toMatch(OBEYED);
  // every block the view closes, it opened
  expect((out.match(/<\/details>/g) ?? []).length, what).toBe((out.match(/<details>/g) ?? []).length);
}

describe("escaping by medium", () => {
  it("a coloured terminal view keeps its own colours and shows every other escape", () => {
    const view =
      "\u001b[1mRule\u001b[22m \u001b[31mx\u001b[39m hidden:\u001b[8m link:\u001b]8;;http://e\u0007 up:\u001b[1A\n";
    expect(terminalSafe(view, true)).toBe(
      "\u001b[1mRule\u001b[22m \u001b[31mx\u001b[39m hidden:\\x1b[8m link:\\x1b]8;;http://e\\x07 up:\\x1b[1A\n",
    );
    expect(terminalSafe(view, false)).not.toContain("\u001b");
  });

  it("the plan in text (with and without colour), Markdown, HTML and the chat notification", async () => {
    const file = join(dir, "plan.json");
    const res = await runCli(["plan", join(dir, "rules.yaml"), "--out", file, "--quiet"], env, { cwd: dir });
    expect(res.stderr).toBe("");
    expectTerminalSafe(res.stdout, "plan text");
    expect(res.stdout).toContain("\\u202egnp.exe");
    // the names the plan shows beside ids are data too (docs/design.md, "Names in a plan")
    expect(res.stdout).toMatch(/\(workflow 1042 Evil\\x1b\[2K/);
    expect(res.stdout).toMatch(/complete step 20111 "Evil\\u001b\[2K/);
    expect(res.stdout).toMatch(/Evil\\x1b\[2K.* field \(50230\): set to "Approved"/);
    // JSON: the file, and so the JSON view, writes what a terminal would act on as \u escapes; it reads back the same
    const fileText = await readFile(file, "utf8");
    expect(fileText).not.toMatch(OBEYED);
    expect(fileText).toContain("\\u202egnp.exe");
    const { plan } = await loadPlanFile(file, proxy.baseUrl);
    expect(PLAN_FORMATS.json(plan, { color: false })).toBe(fileText);
    expect(plan.changes.length).toBeGreaterThan(0);
    expect(plan.changes[0]?.instance_name).toContain("\u001b[2K"); // the data itself is kept as it is
    expectTerminalSafe(PLAN_FORMATS.text(plan, { color: true }), "coloured text");
    const md = PLAN_FORMATS.markdown(plan, { color: false });
    // code fences show their text literally: outside them no markup; inside, no line a name could add
    const fences = [...md.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)];
    expect(fences.length).toBeGreaterThan(0);
    for (const [, lang, body] of fences) {
      for (const line of (body ?? "").split("\n").filter(Boolean))
        expect(line, lang).toMatch(lang === "diff" ? /^(@@ |\+ |- )/ : /^(pie | {4}")/);
    }
    expectMarkupSafe(md.replace(/^```\w*\n[\s\S]*?^```$/gm, ""), "markdown");
    expect(md).toContain("&#60;/details&#62;&#60;img src=x&#62;");
    expect(md).toMatch(/^\+ Evil.* field \(50230\): "Approved"$/m);
    const html = PLAN_FORMATS.html(plan, { color: false });
    expect(html).toContain("&#60;/details&#62;&#60;img src=x&#62;");
    expect(html).toMatch(/ field \(50230\) set to <ins>/);
    expect(html.match(/<img[^>]*>/g) ?? []).toEqual([]);
    expect(html).not.toMatch(OBEYED);
    // a service's error text reaches the chat message: Slack's <!channel> and links are shown, not obeyed
    const failed = { ...plan, errors: [{ code: "api", message: `${EVIL} <!channel> <https://e|click>` }] };
    const chat = planPayload(failed, { startedAt: new Date(), finishedAt: new Date() }).text;
    expect(chat).toContain("Evil\\x1b[2K");
    expect(chat).toContain("&lt;!channel&gt;");
    expect(chat).not.toMatch(OBEYED);
    expect(chat).not.toMatch(/<img/);
  });

  it("workflows, describe and explain", async () => {
    const list = await runCli(["workflows"], env, { cwd: dir });
    expect(list.code).toBe(0);
    expectTerminalSafe(list.stdout, "workflows");
    expect(list.stdout).toContain("folder Evil\\x1b[2K");
    const described = await runCli(["describe", "1042"], env, { cwd: dir });
    expect(described.code).toBe(0);
    expectTerminalSafe(described.stdout, "describe");
    // YAML: controls written as YAML's own escapes, so the document still reads back to the service's names
    const [asYaml, asJson] = await Promise.all([
      runCli(["describe", "1042", "--format", "yaml"], env, { cwd: dir }),
      runCli(["describe", "1042", "--format", "json"], env, { cwd: dir }),
    ]);
    expect(asYaml.stdout).not.toMatch(OBEYED);
    expect(parseYaml(asYaml.stdout)).toEqual(JSON.parse(asJson.stdout));
    expect(asJson.stdout).toContain("Evil");
    const id = sb.store.ids(1042)[0] ?? 0;
    const explained = await runCli(["explain", join(dir, "rules.yaml"), "--instance", String(id)], env, { cwd: dir });
    expect(explained.code).toBe(0);
    expectTerminalSafe(explained.stdout, "explain");
    // a refusal's words from the service end up in the one error line
    proxy.setRule(() => ({
      forward: false,
      answer: { status: 403, headers: { "content-type": "application/json" }, body: JSON.stringify({ detail: EVIL }) },
    }));
    try {
      const refused = await runCli(["describe", "1042"], env, { cwd: dir });
      expect(refused.code).toBe(1);
      expectTerminalSafe(refused.stderr, "error line");
    } finally {
      proxy.setRule(renaming);
    }
  });

  it("the apply summary (a refusal's words from the service) and validation messages (a key from a file)", async () => {
    const sub = join(dir, "apply");
    await import("node:fs/promises").then((fs) => fs.mkdir(sub, { recursive: true }));
    const { file } = await makePlan({ ...sb, baseUrl: proxy.baseUrl }, sub, RULES);
    proxy.setRule((ex) =>
      ex.method === "POST"
        ? {
            forward: false,
            answer: {
              status: 400,
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ detail: EVIL }),
            },
          }
        : {},
    );
    try {
      const io = captureIO();
      await runApply({ baseUrl: proxy.baseUrl }, sub, { paths: [file] }, io);
      expect(io.out()).toMatch(/13 failed|\d+ failed/);
      expectTerminalSafe(io.out(), "apply summary");
    } finally {
      proxy.setRule(() => ({}));
    }
    await writeFile(
      join(sub, "bad.yaml"),
      `version: 1\nrules:\n  - name: x\n    workflow: 1042\n    ${JSON.stringify(EVIL)}: 1\n    actions: [abort]\n`,
    );
    const validated = await runCli(["validate", join(sub, "bad.yaml")], {}, { cwd: sub });
    expect(validated.code).toBe(1);
    expectTerminalSafe(validated.stdout + validated.stderr, "validate");
  });
});
