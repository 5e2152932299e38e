/**
 * Headless Chromium for tests of pages flowrules writes: Debian's chromium-headless-shell driven by playwright-core
 * (no browser download). Pages are opened from file:// with every other request refused and counted. A test that
 * opens one is written `needs("browser", ["chromium"]).it(…)` (./programs.ts): skipped where Chromium is missing,
 * failing in CI.
 */
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type BrowserContextOptions, type Page } from "playwright-core";
import { CHROMIUM } from "./programs.js";

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `headless Chromium not found at ${CHROMIUM}: install it with \`apt-get install -y chromium-headless-shell\` (.ci/run does this in CI), or point FLOWRULES_CHROMIUM at a Chromium binary`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

export interface OpenedPage {
  page: Page;
  /** every request other than the file itself, refused */
  refused: string[];
  /** console errors and uncaught page errors */
  errors: string[];
  close(): Promise<void>;
}

export async function openFile(
  browser: Browser,
  file: string,
  options: BrowserContextOptions = {},
): Promise<OpenedPage> {
  const url = pathToFileURL(file).href;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  const page = await context.newPage();
  const refused: string[] = [];
  const errors: string[] = [];
  await page.route("**/*", async (route) => {
    if (route.request().url() === url) return route.continue();
    refused.push(route.request().url());
    return route.abort();
  });
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url, { waitUntil: "load" });
  return { page, refused, errors, close: () => context.close() };
}
