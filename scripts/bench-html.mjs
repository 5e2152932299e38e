#!/usr/bin/env node
/**
 * `npm run bench:html`: how fast the HTML plan (`flowrules plan --format html`) opens and filters at 10,000 changes.
 * Builds a synthetic plan, renders it with the built renderer (dist/), opens it from file:// in headless Chromium
 * (Debian's chromium-headless-shell, driven by playwright-core; every network request is refused and counted) and
 * prints render, load and filter times. Usage: npm run bench:html [-- --changes N] [-- --keep DIR]
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { html } from "../dist/render/plan/html.js";
import { Prng } from "../dist/sandbox/prng.js";

const CHROMIUM = process.env.FLOWRULES_CHROMIUM ?? "/usr/bin/chromium-headless-shell";
const ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];
const RUNS = 3;

const { values } = parseArgs({ options: { changes: { type: "string", default: "10000" }, keep: { type: "string" } } });
const total = Number(values.changes);
if (!Number.isInteger(total) || total < 1) {
  process.stderr.write(`--changes must be a positive whole number, got ${JSON.stringify(values.changes)}\n`);
  process.exit(1);
}
if (!existsSync(CHROMIUM)) {
  process.stderr.write(
    `${CHROMIUM} not found: install Chromium with \`apt-get install -y chromium-headless-shell\` (or set FLOWRULES_CHROMIUM)\n`,
  );
  process.exit(1);
}

/** A plan of `n` changes over five rules, all three kinds, with names and values shaped like the sandbox's. */
function syntheticPlan(n) {
  const rng = new Prng(42);
  const first = ["Farid", "Bruno", "Vera", "Nadia", "Jonas", "Umar", "Zoe", "Ines", "Wei", "Alice"];
  const last = [
    "Schmidt",
    "Petrov",
    "Andersen",
    "Bianchi",
    "Evans",
    "García",
    "Dubois",
    "Müller",
    "Kowalski",
    "Fischer",
  ];
  const rules = [
    { name: "auto-approve-small-expenses", kind: "complete_step", workflow: 1042, what: "Expense claim" },
    { name: "note-large-purchases", kind: "save_step", workflow: 1044, what: "Purchase request" },
    { name: "abort-abandoned-onboardings", kind: "abort", workflow: 1043, what: "Employee onboarding" },
    { name: "escalate-overdue-reviews", kind: "complete_step", workflow: 1045, what: "Access request" },
    { name: "tag-travel-claims", kind: "save_step", workflow: 1042, what: "Expense claim" },
  ];
  const changes = [];
  const per = rules.map((_, i) => Math.floor(n / rules.length) + (i < n % rules.length ? 1 : 0));
  let id = 100000;
  rules.forEach((r, ri) => {
    for (let k = 0; k < per[ri]; k++) {
      id++;
      const name = `${r.what} #${id} — ${first[rng.int(0, first.length - 1)]} ${last[rng.int(0, last.length - 1)]}`;
      const step = r.kind === "abort" ? undefined : 20111 + ri * 10;
      const change = {
        id: `${r.name}:${r.kind}:${id}${step === undefined ? "" : `:${step}`}`,
        rule: r.name,
        instance_id: id,
        instance_name: name,
        process_id: r.workflow,
        kind: r.kind,
        ...(step === undefined ? {} : { step_id: step }),
        request: { method: "POST", path: `/instances/${id}/${r.kind}/`, body: {} },
        before:
          r.kind === "abort"
            ? { status: "running" }
            : r.kind === "complete_step"
              ? { [`step ${step}`]: "active" }
              : { "action 50264": "Fine" },
        after:
          r.kind === "abort"
            ? { status: "aborted" }
            : r.kind === "complete_step"
              ? { [`step ${step}`]: "completed", "action 50230": `Approved ${rng.int(1, 99)}` }
              : { "action 50264": `Large order: ${rng.int(5000, 30000)} in total` },
        precondition: { status: "running" },
      };
      changes.push(change);
    }
  });
  const count = (kind) => changes.filter((c) => c.kind === kind).length;
  const groups = ["EUR", "USD", "GBP", "CHF", "SEK"].map((key, i) => ({ key, count: 40 - i * 7, instance_ids: [] }));
  return {
    format_version: 1,
    flowrules_version: "bench",
    created_at: new Date().toISOString(),
    base_url: "http://127.0.0.1:4010/api",
    rules_digest: "sha256:bench",
    rules: rules.map((r, i) => ({
      name: r.name,
      workflow_id: r.workflow,
      selected: per[i] * 2,
      matched: per[i],
      changes: per[i],
      skipped: 0,
      status: "ok",
    })),
    changes,
    reports: [
      {
        rule: "open-claims-by-currency",
        title: "Open expense claims by currency",
        group_by: "currency",
        columns: ["id", "name"],
        groups,
        rows: [],
      },
    ],
    errors: [],
    summary: {
      complete_step: count("complete_step"),
      save_step: count("save_step"),
      abort: count("abort"),
      reports: 1,
      errors: 0,
    },
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => `${x.toFixed(0)} ms`;

const plan = syntheticPlan(total);
let t = performance.now();
const page = html(plan, { color: false });
const renderMs = performance.now() - t;
const dir = values.keep ?? (await mkdtemp(join(tmpdir(), "flowrules-bench-html-")));
await mkdir(dir, { recursive: true });
const file = join(dir, "plan.html");
await writeFile(file, page);
const url = pathToFileURL(file).href;

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
let refused = 0;
const loads = [];
const filters = new Map();
// one query per filter a reviewer makes: a single instance, a whole rule, a kind, nothing, and back to all
const queries = [
  ["instance id (1 match)", "#100042"],
  ["rule name", "note-large"],
  ["kind", "abort"],
  ["two words", "claim müller"],
  ["no match", "zzzz"],
  ["cleared (all shown)", ""],
];
try {
  for (let run = 0; run < RUNS; run++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const tab = await context.newPage();
    await tab.route("**/*", (route) => (route.request().url() === url ? route.continue() : (refused++, route.abort())));
    t = performance.now();
    await tab.goto(url, { waitUntil: "load" });
    // the first frame drawn after load: the page is on screen and the search box enabled
    await tab.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
    const wall = performance.now() - t;
    const nav = await tab.evaluate(() => {
      const e = performance.getEntriesByType("navigation")[0];
      const fcp = performance.getEntriesByName("first-contentful-paint")[0];
      return { dcl: e.domContentLoadedEventEnd, load: e.loadEventEnd, fcp: fcp ? fcp.startTime : NaN };
    });
    loads.push({ wall, ...nav });
    for (const [label, q] of queries) {
      // from the input event to the end of the next frame's style and layout, measured inside the page
      const took = await tab.evaluate(async (value) => {
        const box = document.querySelector("input[type=search]");
        const t0 = performance.now();
        box.value = value;
        box.dispatchEvent(new Event("input", { bubbles: true }));
        await new Promise((r) => requestAnimationFrame(() => r(undefined)));
        void document.body.offsetHeight; // force the style and layout the filter caused
        return {
          ms: performance.now() - t0,
          shown: document.querySelectorAll("[data-change-id]:not([hidden])").length,
        };
      }, q);
      const list = filters.get(label) ?? [];
      list.push(took);
      filters.set(label, list);
    }
    await context.close();
  }
} finally {
  await browser.close();
  if (!values.keep) await rm(dir, { recursive: true, force: true });
}

const out = [];
out.push(
  `HTML plan of ${total.toLocaleString("en-US")} changes: ${(page.length / 1024 / 1024).toFixed(1)} MiB, rendered in ${ms(renderMs)} (Node)`,
);
out.push(`Chromium ${browser.version()}, median of ${RUNS} runs; network requests refused: ${refused}`);
out.push("", "| load | median |", "|---|---:|");
out.push(`| DOMContentLoaded | ${ms(median(loads.map((l) => l.dcl)))} |`);
out.push(`| first contentful paint | ${ms(median(loads.map((l) => l.fcp)))} |`);
out.push(`| load event end | ${ms(median(loads.map((l) => l.load)))} |`);
out.push(`| goto → first frame after load (wall) | ${ms(median(loads.map((l) => l.wall)))} |`);
out.push("", "| filter (input → next frame laid out) | shown | median |", "|---|---:|---:|");
for (const [label, list] of filters) out.push(`| ${label} | ${list[0].shown} | ${ms(median(list.map((x) => x.ms)))} |`);
process.stdout.write(`${out.join("\n")}\n`);
if (refused > 0) process.exitCode = 1;
