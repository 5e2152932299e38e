/** The benchmark's results as Markdown (stdout, and the tables in docs/performance.md). */
import type { BenchResults, SideRun, SizeRun, Target } from "./results.js";
import type { MultiRuleRun } from "./multi-rule.js";

const int = (n: number): string => Math.round(n).toLocaleString("en-US");

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(1)} s`;
  const min = Math.floor(s / 60);
  return `${min} min ${String(Math.round(s - min * 60)).padStart(2, "0")} s`;
}

/** Requests at 100 a minute, the production limit. */
export function at100PerMin(requests: number): string {
  const min = requests / 100;
  return min < 120 ? `${min.toFixed(min < 10 ? 2 : 1)} min` : `${(min / 60).toFixed(1)} h`;
}

const mb = (bytes: number | undefined): string => (bytes === undefined ? "–" : `${Math.round(bytes / 1e6)} MB`);

function table(head: string[], rows: string[][], align: Array<"l" | "r">): string {
  const sep = align.map((a) => (a === "r" ? "---:" : "---"));
  return [head, sep, ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
}

function sideRow(run: SizeRun, name: string, side: SideRun): string[] {
  const m = side.modelled ? " *" : "";
  const plan = side.requests.plan.total;
  const apply = side.requests.apply.total;
  return [
    int(run.n),
    `${name}${side.modelled ? " (modelled)" : ""}`,
    `${int(plan)}${m}`,
    `${int(apply)}${m}`,
    `${int(side.requests.total)}${m}`,
    `${(side.requests.total / run.floor.total).toFixed(2)}×`,
    `${side.modelled ? "≈ " : ""}${duration(side.wallMs.total)}`,
    at100PerMin(side.requests.total),
    side.rss === undefined ? "–" : `${mb(side.rss.planBytes)} / ${mb(side.rss.applyBytes)}`,
  ];
}

function mainTable(r: BenchResults): string {
  const rows: string[][] = [];
  for (const run of r.runs) {
    rows.push([
      int(run.n),
      "**floor**",
      int(run.floor.plan),
      int(run.floor.apply),
      int(run.floor.total),
      "1.00×",
      "",
      at100PerMin(run.floor.total),
      "",
    ]);
    rows.push(sideRow(run, "flowrules", run.flowrules));
    rows.push(sideRow(run, "naive", run.naive));
  }
  return table(
    [
      "N",
      "run",
      "plan requests",
      "apply requests",
      "total",
      "× floor",
      "wall time",
      "at 100 req/min",
      "peak RSS plan / apply",
    ],
    rows,
    ["r", "l", "r", "r", "r", "r", "r", "r", "r"],
  );
}

function workloadTable(r: BenchResults): string {
  const rows = r.runs.map((run) => {
    const f = run.flowrules.requests;
    const n = run.naive.requests;
    const kinds = (p: typeof f.plan, a: typeof f.apply): string =>
      `${p.byKind.list + a.byKind.list} list, ${p.byKind.field} field, ${p.byKind.read + a.byKind.read} read, ` +
      `${a.byKind.complete_step} complete, ${a.byKind.bulk_abort} abort`;
    return [
      int(run.n),
      int(run.workload.selected),
      int(run.workload.selectedAtStep),
      int(run.workload.completes),
      int(run.workload.aborts),
      kinds(f.plan, f.apply),
      kinds(n.plan, n.apply) + (run.naive.modelled ? " *" : ""),
      `${(n.plan.total / f.plan.total).toFixed(0)}× / ${(n.total / f.total).toFixed(1)}×`,
    ];
  });
  return table(
    [
      "N",
      "selected",
      "at step 20111",
      "complete_step",
      "abort",
      "flowrules requests",
      "naive requests",
      "naive ÷ flowrules (plan / total)",
    ],
    rows,
    ["r", "r", "r", "r", "r", "l", "l", "r"],
  );
}

function targetRow(t: Target): string[] {
  const verdict = t.met === null ? "not measured" : t.met ? "**met**" : "**missed**";
  return [t.text, t.measured + (t.note ? ` — ${t.note}` : ""), verdict];
}

/** The multi-rule plan's requests by kind: before the query planner, now, and the distinct-selection floor. */
function multiTable(m: MultiRuleRun): string {
  const b = m.before;
  const row = (what: string, now: number, before: number | undefined, floor: string): string[] => [
    what,
    before === undefined ? "—" : int(before),
    int(now),
    floor,
  ];
  const head =
    `Multi-rule plan: ${m.rules} rules over four workflows, ${m.distinctSelections} distinct selections, sandbox of ${int(m.n)}; ` +
    `${m.changes} changes, ${m.errors} errors, in ${duration(m.wallMs)}. "Before" is the same plan before the query planner (measured on 414913f).`;
  return `${head}\n\n${table(
    ["requests", "before", "now", "floor: each distinct selection listed once"],
    [
      row("list pages", m.requests.list, b?.list, int(m.floorLists)),
      row("form-field pages", m.requests.field, b?.field, ""),
      row("record reads", m.requests.read, b?.read, ""),
      row("total", m.requests.total, b?.total, ""),
    ],
    ["l", "r", "r", "r"],
  )}`;
}

export function renderMarkdown(r: BenchResults): string {
  const out: string[] = [];
  const c = r.config;
  out.push(`## flowrules benchmark — ${r.generated_at.slice(0, 10)}`);
  out.push("");
  out.push(
    `Sandbox in-process, ${c.latency_ms} ms latency per request, no rate limit; flowrules with ${c.concurrency} requests in flight, ` +
      `bulk aborts of ${c.abort_batch}; the naive baseline sequential. Requests counted from the sandbox's request log. ` +
      `Peak RSS: ${c.rss}. Node ${r.environment.node}, ${r.environment.cpus} CPU (${r.environment.cpu_model}), load average at start ${r.environment.loadavg_at_start.map((x) => x.toFixed(1)).join(" ")}.`,
  );
  out.push("");
  out.push(mainTable(r));
  out.push("");
  if (r.runs.some((run) => run.naive.modelled)) {
    out.push(
      "\\* modelled, not run: requests from the workload (exact for this algorithm), time at the per-request time measured for the largest naive run.",
    );
    out.push("");
  }
  out.push(workloadTable(r));
  out.push("");
  out.push(
    `Floor (docs/design.md, Performance model): plan = ceil(selected/500) list pages + ceil(at-step/500) list pages (the approval rule's own selection) + ` +
      `2 fields × ceil(selected/500) form-field pages; apply = one complete_step each + ceil(aborts/${c.abort_batch}) bulk aborts + 1 staleness list.`,
  );
  out.push("");
  const cpu = r.cpu;
  out.push(
    table(
      [
        "evaluation, data in memory",
        `instances / s (${int(cpu.instances)} instances, ${int(cpu.matched)} match; best of ${cpu.rounds})`,
      ],
      [
        ["bare `jsonata(expr).evaluate(ctx)`", int(cpu.bareJsonataPerSec)],
        ["the rule's compiled expression as the engine evaluates it (`evalExpr`)", int(cpu.compiledExprPerSec)],
        ["`evaluateInstance` (context, when, planned change)", int(cpu.evaluateInstancePerSec)],
      ],
      ["l", "r"],
    ),
  );
  out.push("");
  out.push(`Condition: \`${cpu.condition}\`.`);
  out.push("");
  if (r.abort) {
    const a = r.abort;
    out.push(
      `Bulk abort: ${int(a.count)} instances (sandbox of ${int(a.n)}) — plan ${a.planRequests.total} requests in ${duration(a.wallMs.plan)}, ` +
        `apply ${a.applyRequests.total} requests (${a.applyRequests.byKind.bulk_abort} bulk aborts + ${a.applyRequests.byKind.list} staleness list) ` +
        `in ${duration(a.wallMs.apply)}; ${a.verified ? "all aborted, verified in the sandbox" : "NOT all aborted"}.`,
    );
    out.push("");
  }
  if (r.multi) {
    out.push(multiTable(r.multi));
    out.push("");
  }
  out.push(table(["target", "measured", ""], r.targets.map(targetRow), ["l", "l", "l"]));
  out.push("");
  out.push(`Whole benchmark: ${duration(r.total_ms)}.`);
  return `${out.join("\n")}\n`;
}
