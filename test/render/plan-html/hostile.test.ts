/**
 * The HTML plan treats every value as text: instance names, values, report keys and error messages that look like
 * markup show literally in Chromium and inject nothing, in content, attributes and the embedded search data. Also the
 * keys another part of flowrules may add (`audit` on a change, `excluded` on a rule) appear only when present.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Plan, PlannedChange } from "../../../src/plan/types.js";
import { PLAN_FORMATS } from "../../../src/render/plan/index.js";
import { esc, scriptJson } from "../../../src/render/plan/html.js";
import { launchBrowser, openFile, type OpenedPage } from "../../helpers/browser.js";
import { needs } from "../../helpers/programs.js";
import { tempDir } from "../../helpers/temp.js";

const IMG = "<img src=x onerror=window.__x=1>";
const SCRIPT = "</script><script>window.__y=1</script>";
const ATTR = `" onmouseover="window.__w=1" x="`;
const SVG = "<svg onload=window.__z=1>";
const SEPARATORS = "line\u2028para\u2029end & <!-- -->";

function change(
  over: Partial<PlannedChange> & Pick<PlannedChange, "id" | "instance_id" | "instance_name">,
): PlannedChange {
  return {
    rule: "hostile-names",
    process_id: 1042,
    kind: "save_step",
    step_id: 20111,
    request: { method: "POST", path: `/instances/${over.instance_id}/save_step/`, body: {} },
    before: { "action 50230": "old" },
    after: { "action 50230": SCRIPT },
    precondition: { status: "running", active_step_id: 20111 },
    ...over,
  };
}

const changes: Array<PlannedChange & { audit?: boolean }> = [
  change({ id: "hostile-names:save_step:1:20111", instance_id: 1, instance_name: IMG }),
  change({
    id: "hostile-names:save_step:2:20111",
    instance_id: 2,
    instance_name: SCRIPT,
    before: { [ATTR]: SEPARATORS },
    after: { [ATTR]: IMG },
  }),
  {
    ...change({
      id: `hostile-names:abort:3${ATTR}`,
      instance_id: 3,
      instance_name: SEPARATORS,
      kind: "abort",
      before: { status: "running" },
      after: { status: "aborted" },
    }),
    audit: true,
  },
];
delete changes[2]!.step_id;

const plan: Plan & { rules: Array<Plan["rules"][number] & { excluded?: number }> } = {
  format_version: 1,
  flowrules_version: "0.0.0",
  created_at: "2026-11-01T12:00:00.000Z",
  base_url: "http://127.0.0.1:4010/api",
  rules_digest: "sha256:fixture",
  rules: [
    {
      name: "hostile-names",
      workflow_id: 1042,
      workflow_name: SVG,
      selected: 9,
      matched: 4,
      excluded: 1,
      changes: 3,
      skipped: 1,
      status: "ok",
    },
    { name: "by-hostile-key", workflow_id: 1042, selected: 3, matched: 3, changes: 0, skipped: 0, status: "failed" },
  ],
  changes,
  reports: [
    {
      rule: "by-hostile-key",
      title: `Report ${IMG}`,
      group_by: "tags",
      columns: ["id", "name"],
      groups: [
        { key: SVG, count: 2, instance_ids: [1, 2] },
        { key: SCRIPT, count: 1, instance_ids: [3] },
      ],
      rows: [
        { id: 1, name: IMG },
        { id: 2, name: SCRIPT },
        { id: 3, name: SEPARATORS },
      ],
    },
  ],
  errors: [{ rule: "by-hostile-key", instance_id: 3, code: "evaluation", message: `cannot evaluate ${IMG}` }],
  summary: { complete_step: 0, save_step: 2, abort: 1, reports: 1, errors: 1 },
};

// every test but the first opens the page in Chromium: skipped without it, failing in CI (test/helpers/programs.ts)
const chromium = needs("browser", ["chromium"]);

let browser: Browser;
let opened: OpenedPage;
let page: Page;
let out: string;

beforeAll(async () => {
  out = PLAN_FORMATS.html(plan, { color: false });
  const file = join(await tempDir("flowrules-html-"), "plan.html");
  await writeFile(file, out);
  if (!chromium.available) return;
  browser = await launchBrowser();
  opened = await openFile(browser, file);
  page = opened.page;
});
afterAll(async () => {
  await opened?.close();
  await browser?.close();
});

describe("plan --format html with hostile values", () => {
  it("escapes text, attributes and script data", () => {
    expect(esc(`<a href="x" title='y'>&`)).toBe("&#60;a href=&#34;x&#34; title=&#39;y&#39;&#62;&#38;");
    const json = scriptJson([SCRIPT, SEPARATORS]);
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(json)).toEqual([SCRIPT, SEPARATORS]);
    // the page holds exactly the two scripts it writes itself
    expect(out.match(/<script\b/g)).toHaveLength(2);
    expect(out).not.toContain("<img");
  });

  chromium.it("shows hostile names as text and runs nothing injected", async () => {
    expect(opened.refused).toEqual([]);
    expect(opened.errors).toEqual([]);
    const injected = await page.evaluate(
      "[window.__x, window.__y, window.__z, window.__w, document.querySelectorAll('img, iframe').length, document.scripts.length]",
    );
    expect(injected).toEqual([undefined, undefined, undefined, undefined, 0, 2]);
    expect(await page.textContent('[data-change-id="hostile-names:save_step:1:20111"] > span:nth-child(2)')).toBe(
      `#1 ${IMG}`,
    );
    expect(await page.textContent('[data-change-id="hostile-names:save_step:2:20111"] > span:nth-child(2)')).toBe(
      `#2 ${SCRIPT}`,
    );
    expect(await page.textContent('[data-change-id="hostile-names:save_step:2:20111"] > span:nth-child(4)')).toContain(
      ATTR,
    );
    expect(await page.textContent("#errors")).toContain(`cannot evaluate ${IMG}`);
    expect(await page.textContent("#rules")).toContain(SVG);
    expect(await page.textContent("#reports h3")).toBe(`Report ${IMG}`);
  });

  chromium.it("keeps every change id, even one with quotes, as one data-change-id", async () => {
    const ids = await page.$$eval("[data-change-id]", (els) => els.map((e) => e.getAttribute("data-change-id")));
    expect(ids).toEqual(changes.map((c) => c.id));
  });

  chromium.it("charts a hostile group key as a label, and filters by hostile text", async () => {
    const chart = await page.$eval("#reports svg", (svg) => ({
      text: svg.textContent ?? "",
      children: svg.querySelectorAll("svg, script").length,
    }));
    expect(chart.text).toContain(`${SVG}: 2`);
    expect(chart.text).toContain(`${SCRIPT}: 1`);
    expect(chart.children).toBe(0);
    await page.locator("input[type=search]").pressSequentially("</script>");
    await page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))");
    const shown = await page.$$eval("[data-change-id]", (els) =>
      els.filter((e) => e.checkVisibility()).map((e) => e.getAttribute("data-change-id")),
    );
    expect(shown).toEqual([changes[1]!.id]);
    await page.locator("input[type=search]").fill("\u2028para");
    await page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))");
    const bySeparator = await page.$$eval("[data-change-id]", (els) =>
      els.filter((e) => e.checkVisibility()).map((e) => e.getAttribute("data-change-id")),
    );
    expect(bySeparator).toEqual([changes[2]!.id]);
    await page.locator("input[type=search]").fill("");
  });

  chromium.it("marks audit changes and shows the excluded column when a rule has an excluded count", async () => {
    expect(
      await page.$$eval("[data-change-id] .badge", (els) =>
        els.map((e) => `${e.closest("[data-change-id]")?.getAttribute("data-change-id")} ${e.textContent}`),
      ),
    ).toEqual([`${changes[2]!.id} audit`]);
    const head = await page.$$eval("#rules th[scope=col]", (ths) => ths.map((t) => t.textContent));
    expect(head).toEqual(["Rule", "Workflow", "Selected", "Matched", "Excluded", "Changes", "Skipped", "Status"]);
    const nums = await page.$$eval('#rules tr[data-rule="hostile-names"] td.num', (tds) =>
      tds.map((td) => td.textContent),
    );
    expect(nums).toEqual(["9", "4", "1", "3", "1"]);
    // a rule without the key gets an empty cell, not a made-up zero
    expect(
      await page.$$eval('#rules tr[data-rule="by-hostile-key"] td.num', (tds) => tds.map((td) => td.textContent)),
    ).toEqual(["3", "3", "", "0", "0"]);
    expect(await page.textContent('#rules tr[data-rule="by-hostile-key"] td:last-child')).toBe("failed");
  });
});
