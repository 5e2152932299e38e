/**
 * `flowrules forecast --format html` on the starter rules against the sandbox, opened in headless Chromium from
 * file://: nothing is fetched, no script error, one chart per rule with a point per instant, and the table's counts
 * are the JSON document's of the same horizon.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { startSandbox, type RunningSandbox } from "../../src/sandbox/index.js";
import type { ForecastDocument } from "../../src/render/forecast/types.js";
import { launchBrowser, openFile, type OpenedPage } from "../helpers/browser.js";
import { needs } from "../helpers/programs.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

const chromium = needs("browser", ["chromium"]);
let sb: RunningSandbox;
let browser: Browser | undefined;
let opened: OpenedPage | undefined;
let doc: ForecastDocument;

beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  const dir = await tempDir("flowrules-forecast-html-");
  const env = { FLOWRULES_BASE_URL: sb.baseUrl, FLOWRULES_API_KEY: "sandbox-admin", FLOWRULES_RATE_LIMIT: "0" };
  // the HTML and the JSON of one forecast: the sandbox's data does not change between the two runs
  const html = await runCli(["forecast", "--until", "+60d", "--every", "10d", "--format", "html", "-q"], env);
  if (html.code !== 0) throw new Error(`forecast --format html exited ${html.code}: ${html.stderr}`);
  const json = await runCli(["forecast", "--until", "+60d", "--every", "10d", "--format", "json", "-q"], env);
  doc = JSON.parse(json.stdout) as ForecastDocument;
  const file = join(dir, "forecast.html");
  await writeFile(file, html.stdout);
  if (!chromium.available) return;
  browser = await launchBrowser();
  opened = await openFile(browser, file);
});
afterAll(async () => {
  await opened?.close();
  await browser?.close();
  await sb?.close();
});

describe("forecast --format html in a browser", () => {
  chromium.it(
    "opens from file:// with no request and no error; a chart per rule, a point per instant; the table is the JSON's",
    async () => {
      const page = opened?.page;
      if (!page) throw new Error("no page");
      expect(opened?.refused).toEqual([]);
      expect(opened?.errors).toEqual([]);
      const charts = await page.$$eval("section.rule", (els) =>
        els.map((e) => ({ rule: e.getAttribute("data-rule"), points: e.querySelectorAll("svg circle").length })),
      );
      expect(charts).toEqual(doc.rules.map((r) => ({ rule: r.rule, points: doc.points.length })));
      const rows = await page.$$eval("#points tbody tr", (els) =>
        els.map((e) => [...e.querySelectorAll("td")].slice(1).map((td) => Number(td.textContent))),
      );
      expect(rows).toEqual(doc.rules.map((r) => r.points.map((p) => p.changes)));
    },
  );
});
