// The million scenario's first sync and steady run outside the bench, for looking at one run's memory
// (docs/performance.md, "A million instances"). Needs `npm run build && npm run build:extra` and GNU time
// (/usr/bin/time, Debian's `time` package).
//
//   node bench/tools/scenario-runs.mjs N [--port P] [--state DIR] [--cli FILE] [-- NODE_OPTIONS_FOR_THE_CLI…]
//
// A sandbox of N instances (seed 1, the scenario's pinned clock) listens on P (default: any free port); the state
// scenario's rules (bench/src/state.ts) are planned with `plan --format json -q --rate-limit 0 --state` (the plan on stdout). Without
// DIR, or with an empty one, a first sync writes the state there; then, 127 s later by the sandbox's clock, a steady
// run plans from a copy of it. A state is bound to its service's address: to run the steady run again on the same
// first sync, give the same --port and --state. Each run prints its peak RSS, wall and CPU time, its memory trace
// (./memory-trace.mjs) and a digest of its plan with the run's own times (`$now()` in inputs, created_at, digest)
// left out, to hold two builds' plans equal.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  closeSync,
  cpSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const { SandboxProcess } = await import(here("../../dist-extra/bench/src/sandbox-proc.js"));
const { STATE_RULES_YAML } = await import(here("../../dist-extra/bench/src/state.js"));

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { port: { type: "string" }, state: { type: "string" }, cli: { type: "string" } },
});
const n = Number(positionals[0] ?? 200000);
const nodeArgs = positionals.slice(1);
const cli = values.cli ?? here("../../dist/cli/index.js");
const work = mkdtempSync(join(tmpdir(), "scenario-runs-"));
const stateDir = values.state ?? join(work, "first");
const rules = join(work, "rules.yaml");
writeFileSync(rules, STATE_RULES_YAML);

const sandbox = await SandboxProcess.start({
  instances: n,
  seed: 1,
  latencyMs: 0,
  ...(values.port ? { port: Number(values.port) } : {}),
  now: "2026-06-15T12:00:00.000Z",
});
const env = { ...process.env, FLOWRULES_BASE_URL: sandbox.baseUrl, FLOWRULES_API_KEY: "sandbox-admin" };

/** One plan run on `state`; its stderr's last lines and a digest of its plan without the run's own times. */
function run(label, state) {
  const planFile = join(work, `${label}.json`);
  const args = ["-f", "%M KB peak RSS, %e s, %U s user", process.execPath, ...nodeArgs];
  args.push("--import", here("./memory-trace.mjs"), cli, "plan", rules, "--format", "json", "-q");
  args.push("--rate-limit", "0", "--state", state);
  // the plan on stdout, as the bench's runs write it (`--out` would also record what the plan saw of each instance)
  const out = openSync(planFile, "w");
  return new Promise((resolve) => {
    const child = spawn("/usr/bin/time", args, { env, stdio: ["ignore", out, "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", () => {
      closeSync(out);
      const today = new Date().toISOString().slice(0, 10);
      const plan = existsSync(planFile) ? readFileSync(planFile, "utf8") : "";
      const normal = plan
        .split("\n")
        .filter((line) => !/"(created_at|digest)":/.test(line))
        .join("\n")
        .replaceAll(new RegExp(`${today}T[0-9:.]+Z`, "g"), "NOW");
      const digest = createHash("sha256").update(normal).digest("hex").slice(0, 16);
      console.log(`${label}:\n${err.trim()}\nplan ${digest} (${plan.length} characters)`);
      rmSync(planFile, { force: true });
      resolve();
    });
  });
}

try {
  if (!existsSync(stateDir) || readdirSync(stateDir).length === 0) await run("first sync", stateDir);
  await sandbox.advance(127000);
  const copy = join(work, "steady");
  cpSync(stateDir, copy, { recursive: true });
  await run("steady", copy);
} finally {
  await sandbox.close();
  rmSync(work, { recursive: true, force: true });
}
