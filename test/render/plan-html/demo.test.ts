/**
 * `flowrules plan --format html --out plan.json > plan.html` on the demo rules and the report examples against the
 * sandbox, opened in headless Chromium from file://: nothing is fetched, every change of the JSON plan of the same
 * run is on the page once, the counts are the plan's, the search box filters as one types, each report is a chart.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Plan } from "../../../src/plan/types.js";
import { summaryLine } from "../../../src/render/plan/summary.js";
import { startSandbox, type RunningSandbox } from "../../../src/sandbox/index.js";
import { launchBrowser, openFile, type OpenedPage } from "../../helpers/browser.js";
import { needs } from "../../helpers/programs.js";
import { runCli } from "../../helpers/cli.js";
import { tempDir } from "../../helpers/temp.js";

const OUTPUT = fileURLToPath(new URL("../../../test-output/", import.meta.url));

let sb: RunningSandbox;
// every test but the first opens the page in Chromium: skipped without it, failing in CI (test/helpers/programs.ts)
const chromium = needs("browser", ["chromium"]);

let browser: Browser;
let plan: Plan;
let htmlFile: string;
let opened: OpenedPage;

beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  const dir = await tempDir("flowrules-html-");
  const env = { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" };
  const planFile = join(dir, "plan.json");
  const r = await runCli(["plan", "rules/", "examples/reports/", "--format", "html", "--out", planFile, "-q"], env);
  if (r.code !== 0) throw new Error(`plan --format html exited ${r.code}: ${r.stderr}`);
  htmlFile = join(dir, "plan.html");
  await writeFile(htmlFile, r.stdout);
  plan = JSON.parse(await readFile(planFile, "utf8")) as Plan;
  if (!chromium.available) return;
  browser = await launchBrowser();
  opened = await openFile(browser, htmlFile);
});
afterAll(async () => {
  await opened?.close();
  await browser?.close();
  await sb?.close();
});

/** Lets the filter's animation frame run. */
// (page code as strings: the test build has no DOM types)
const nextFrame = (page: Page): Promise<unknown> =>
  page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))");

async function visibleIds(page: Page): Promise<string[]> {
  await nextFrame(page);
  return page.$$eval("[data-change-id]", (els) =>
    els.filter((e) => e.checkVisibility()).map((e) => e.getAttribute("data-change-id") ?? ""),
  );
}

const idsWhere = (pred: (c: Plan["changes"][number]) => boolean): string[] =>
  plan.changes
    .filter(pred)
    .map((c) => c.id)
    .sort();

describe("plan --format html (demo rules, in Chromium)", () => {
  it("plans something worth looking at: changes of every kind and reports", () => {
    expect(plan.summary.complete_step).toBeGreaterThan(0);
    expect(plan.summary.save_step).toBeGreaterThan(0);
    expect(plan.summary.abort).toBeGreaterThan(0);
    expect(plan.reports.length).toBeGreaterThanOrEqual(2);
  });

  chromium.it("makes no network request and logs no error", () => {
    expect(opened.refused).toEqual([]);
    expect(opened.errors).toEqual([]);
  });

  chromium.it("has exactly one [data-change-id] element per change of the JSON plan of the same run", async () => {
    const ids = await opened.page.$$eval("[data-change-id]", (els) =>
      els.map((e) => e.getAttribute("data-change-id") ?? ""),
    );
    expect(ids.length).toBe(plan.changes.length);
    expect(new Set(ids)).toEqual(new Set(plan.changes.map((c) => c.id)));
  });

  chromium.it("shows the summary line, the counts by kind and the rules table of the plan", async () => {
    const { page } = opened;
    expect((await page.textContent("#summary"))?.trim()).toBe(summaryLine(plan));
    for (const k of ["complete_step", "save_step", "abort", "reports"] as const) {
      expect(Number(await page.textContent(`[data-count="${k}"] dd`)), k).toBe(plan.summary[k]);
    }
    expect(Number(await page.textContent(`[data-count="errors"] dd`))).toBe(plan.errors.length);
    for (const r of plan.rules) {
      const nums = await page.$$eval(`#rules tr[data-rule="${r.name}"] td.num`, (tds) =>
        tds.map((td) => Number(td.textContent)),
      );
      expect(nums, r.name).toEqual([r.selected, r.matched, r.changes, r.skipped]);
    }
    // no rule has an `excluded` count in this plan, so there is no such column
    expect(await page.$$eval("#rules th", (ths) => ths.map((t) => t.textContent))).not.toContain("Excluded");
  });

  chromium.it("shows each change's instance, kind, step and before → after", async () => {
    const ch = plan.changes.find((c) => c.kind === "complete_step");
    expect(ch).toBeDefined();
    const row = await opened.page.textContent(`[data-change-id="${ch!.id}"]`);
    expect(row).toContain(`#${ch!.instance_id}`);
    expect(row).toContain(ch!.instance_name);
    expect(row).toContain("complete a step");
    expect(row).toContain(`step ${ch!.step_id}`);
    expect(row).toMatch(/"active"\s*→\s*"completed"/);
  });

  chromium.it(
    "filters by instance id, rule and kind as one types, and shows everything again when cleared",
    async () => {
      const { page } = opened;
      const box = page.locator("input[type=search]");
      const all = plan.changes.map((c) => c.id).sort();
      expect((await visibleIds(page)).sort()).toEqual(all);

      const one = plan.changes[Math.floor(plan.changes.length / 2)]!;
      await box.pressSequentially(String(one.instance_id));
      expect((await visibleIds(page)).sort()).toEqual(idsWhere((c) => c.instance_id === one.instance_id));

      const rule = plan.changes.find((c) => c.kind === "save_step")!.rule;
      await box.fill("");
      await box.pressSequentially(rule);
      expect((await visibleIds(page)).sort()).toEqual(idsWhere((c) => c.rule === rule));
      // sections of other rules are hidden with their rows
      expect(
        await page.$$eval("#changes .rule-changes", (s) =>
          s.filter((x) => x.checkVisibility()).map((x) => x.getAttribute("data-rule")),
        ),
      ).toEqual([rule]);

      await box.fill("abort");
      expect((await visibleIds(page)).sort()).toEqual(idsWhere((c) => c.kind === "abort"));
      await box.fill("complete_step");
      expect((await visibleIds(page)).sort()).toEqual(idsWhere((c) => c.kind === "complete_step"));
      expect(await page.textContent("#shown")).toBe(
        `${plan.summary.complete_step} of ${plan.changes.length} changes shown`,
      );

      await box.fill("no instance is called this");
      expect(await visibleIds(page)).toEqual([]);
      await box.fill("");
      expect((await visibleIds(page)).sort()).toEqual(all);
    },
  );

  chromium.it("is usable by keyboard: / focuses the search box", async () => {
    const { page } = opened;
    await page.locator("body").click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("/");
    expect(await page.evaluate("document.activeElement?.getAttribute('type')")).toBe("search");
    await page.keyboard.type("abort");
    expect((await visibleIds(page)).sort()).toEqual(idsWhere((c) => c.kind === "abort"));
    await page.locator("input[type=search]").fill("");
  });

  chromium.it("draws each report as an SVG bar chart labelled by group key, with the counts", async () => {
    const charts = await opened.page.$$eval("#reports .report", (sections) =>
      sections.map((s) => ({
        rule: s.getAttribute("data-report-rule"),
        svgs: s.querySelectorAll("svg").length,
        text: s.querySelector("svg")?.textContent ?? "",
      })),
    );
    expect(charts.map((c) => c.rule)).toEqual(plan.reports.map((r) => r.rule));
    for (const [i, r] of plan.reports.entries()) {
      const chart = charts[i]!;
      expect(chart.svgs, r.rule).toBe(r.groups.length > 0 ? 1 : 0);
      for (const g of r.groups) {
        expect(chart.text, `${r.rule}: ${g.key}`).toContain(g.key);
        expect(chart.text).toContain(`${g.key}: ${g.count}`);
      }
    }
  });

  chromium.it("is readable with scripts off: every change listed, the charts drawn", async () => {
    const off = await openFile(browser, htmlFile, { javaScriptEnabled: false });
    try {
      const { page } = off;
      const shown = await page.$$eval("[data-change-id]", (els) => els.filter((e) => e.checkVisibility()).length);
      expect(shown).toBe(plan.changes.length);
      expect(await page.locator("#reports svg").count()).toBe(plan.reports.filter((r) => r.groups.length > 0).length);
      // the filter needs the script: the box stays disabled and the page says why
      expect(await page.locator("input[type=search]").isDisabled()).toBe(true);
      expect(await page.textContent("#changes .filter")).toContain("Filtering needs JavaScript");
      expect(off.refused).toEqual([]);
    } finally {
      await off.close();
    }
  });

  chromium.it("keeps a screenshot of the page, light and dark, in test-output/", async () => {
    await mkdir(OUTPUT, { recursive: true });
    for (const colorScheme of ["light", "dark"] as const) {
      const shot = await openFile(browser, htmlFile, { colorScheme });
      try {
        const bg = await shot.page.evaluate("getComputedStyle(document.body).backgroundColor");
        expect(bg).toBe(colorScheme === "light" ? "rgb(255, 255, 255)" : "rgb(13, 17, 23)");
        const file = join(OUTPUT, colorScheme === "light" ? "plan-html.png" : "plan-html-dark.png");
        await shot.page.screenshot({ path: file, fullPage: true });
        expect((await readFile(file)).subarray(1, 4).toString()).toBe("PNG");
      } finally {
        await shot.close();
      }
    }
  });
});
