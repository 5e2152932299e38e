/**
 * The CI examples are meant to be copied: each must parse, use only verbs and flags flowrules has (asked of the real
 * commander program), pass valid values to options with choices, keep the API key out of the files, and have the
 * safety properties its README section promises.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Command, Option } from "commander";
import { beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { USERS } from "../../src/sandbox/index.js";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  containerInvocations,
  DEPLOY_DIR,
  exampleFiles,
  flowrulesInvocations,
  loadYamlExamples,
  runnableStrings,
  type Example,
} from "./examples-lib.js";

let examples: Example[];
/** examples/deploy: the watcher's Kubernetes manifests */
let deploy: Example[];
beforeAll(async () => {
  examples = await loadYamlExamples();
  deploy = await loadYamlExamples(DEPLOY_DIR);
});

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Checks one invocation against the program; returns the problems found. */
function checkInvocation(program: Command, words: string[]): string[] {
  const problems: string[] = [];
  const globals = program.options;
  const find = (opts: readonly Option[], name: string): Option | undefined =>
    opts.find((o) => o.long === name || o.short === name);
  let verb: Command | undefined;
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? "";
    if (!word.startsWith("-")) {
      if (verb) continue; // a path argument
      verb = program.commands.find((c) => c.name() === word);
      if (!verb) problems.push(`unknown verb "${word}"`);
      continue;
    }
    const [name = "", inline] = word.split("=", 2);
    const opt = find(verb ? [...verb.options, ...globals] : globals, name);
    if (!opt) {
      problems.push(`${verb ? `flowrules ${verb.name()}` : "flowrules"} has no option ${name}`);
      continue;
    }
    if (opt.required || opt.optional) {
      const value = inline ?? words[i + 1];
      if (inline === undefined) i++;
      if (opt.required && (value === undefined || value.startsWith("-"))) problems.push(`${name} needs a value`);
      // a value from the CI system (a $VARIABLE or ${{ expression }}) is checked by flowrules at run time
      else if (value !== undefined && opt.argChoices && !value.includes("$") && !opt.argChoices.includes(value)) {
        problems.push(`${name} ${value}: not one of ${opt.argChoices.join(", ")}`);
      }
    }
  }
  if (!verb) problems.push("no verb");
  return problems;
}

describe("CI examples", () => {
  it("include GitHub Actions (pull request and schedule), GitLab CI and a Kubernetes CronJob", async () => {
    const files = examples.map((e) => e.file);
    expect(files).toEqual(
      expect.arrayContaining([
        "github/flowrules-pr.yml",
        "github/flowrules-schedule.yml",
        "gitlab/gitlab-ci.yml",
        "kubernetes/cronjob.yaml",
      ]),
    );
    expect((await exampleFiles()).length).toBeGreaterThanOrEqual(files.length);
  });

  it("use only flowrules verbs and flags that exist, with valid values", () => {
    const program = buildProgram();
    const problems: string[] = [];
    let count = 0;
    const verbs = new Set<string>();
    for (const e of examples) {
      for (const s of e.docs.flatMap((d) => runnableStrings(d))) {
        for (const words of flowrulesInvocations(s)) {
          count++;
          verbs.add(words.find((w) => !w.startsWith("-")) ?? "");
          for (const p of checkInvocation(program, words))
            problems.push(`${e.file}: npx flowrules ${words.join(" ")}: ${p}`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(count).toBeGreaterThanOrEqual(10);
    expect([...verbs].sort()).toEqual(expect.arrayContaining(["apply", "plan", "test", "validate"]));
  });

  it("the checker itself catches an unknown flag, a bad choice and an unknown verb", () => {
    const program = buildProgram();
    expect(checkInvocation(program, ["plan", "--formt", "json"])).toEqual(["flowrules plan has no option --formt"]);
    expect(checkInvocation(program, ["validate", "--format", "sarif"])[0]).toMatch(/not one of/);
    expect(checkInvocation(program, ["deploy"])).toContain('unknown verb "deploy"');
    expect(checkInvocation(program, ["--log-format", "json", "apply", "plan.json", "--shard", "0/2"])).toEqual([]);
  });

  it("never contain an API key: FLOWRULES_API_KEY comes from a secret store only", () => {
    const demoKeys = USERS.map((u) => u.key);
    const found: string[] = [];
    const visit = (file: string, node: unknown): void => {
      if (Array.isArray(node)) {
        for (const v of node) visit(file, v);
        return;
      }
      if (!isRecord(node)) return;
      for (const [k, v] of Object.entries(node)) {
        // env maps (GitHub, GitLab variables): a secret expression only
        if (k === "FLOWRULES_API_KEY" && !(typeof v === "string" && /^\$\{\{\s*secrets\.[A-Z0-9_]+\s*\}\}$/.test(v))) {
          found.push(`${file}: FLOWRULES_API_KEY: ${JSON.stringify(v)}`);
        }
        visit(file, v);
      }
      // Kubernetes env lists: valueFrom.secretKeyRef, never value
      if (
        node.name === "FLOWRULES_API_KEY" &&
        ("value" in node || !isRecord(node.valueFrom) || !isRecord(node.valueFrom.secretKeyRef))
      ) {
        found.push(`${file}: env FLOWRULES_API_KEY without secretKeyRef`);
      }
    };
    for (const e of [...examples, ...deploy]) {
      for (const d of e.docs) visit(e.file, d);
      for (const key of demoKeys) if (e.text.includes(key)) found.push(`${e.file}: contains the demo key ${key}`);
      if (/--api-key\b|Api-Key\s+[A-Za-z0-9]/i.test(e.text)) found.push(`${e.file}: passes a key literally`);
    }
    expect(found).toEqual([]);
    // the key is referenced somewhere in each example that talks to the service
    for (const e of [...examples, ...deploy]) expect(e.text, e.file).toContain("FLOWRULES_API_KEY");
  });

  it("pull request workflow: github annotations, one replaced comment by a hidden marker, the JSON plan as an artifact", () => {
    const pr = examples.find((e) => e.file === "github/flowrules-pr.yml");
    expect(pr).toBeDefined();
    const text = pr?.text ?? "";
    expect(text).toMatch(/npx flowrules validate [^\n]*--format github/);
    // the comment shows what the edit changes (plan --compare), not the plan of the edited rules
    expect(text).toMatch(/npx flowrules plan [^\n]*--compare "origin\/\$BASE_REF"/);
    expect(text).toContain("<!-- flowrules-plan -->");
    expect(text).toContain("actions/github-script@");
    expect(text).toContain("updateComment");
    expect(text).toContain("actions/upload-artifact@");
    expect(text).toMatch(/^\s+plan\.json$/m);
  });

  it("schedule workflow: apply --auto-approve in a concurrency group that never cancels a run, journal kept", () => {
    const s = examples.find((e) => e.file === "github/flowrules-schedule.yml");
    const doc = s?.docs[0];
    expect(isRecord(doc)).toBe(true);
    if (!isRecord(doc)) return;
    expect(doc.concurrency).toEqual({ group: "flowrules-apply", "cancel-in-progress": false });
    expect(s?.text).toMatch(/npx flowrules apply rules\/ --auto-approve/);
    expect(s?.text).toContain(".flowrules/runs/");
    expect(s?.text).toContain("include-hidden-files: true");
  });

  it("schedules keep the --state dir as a CI cache: restored before, saved after, the same path as --state", () => {
    const s = examples.find((e) => e.file === "github/flowrules-schedule.yml");
    const doc = s?.docs[0];
    if (!isRecord(doc) || !isRecord(doc.jobs) || !isRecord(doc.jobs.apply) || !Array.isArray(doc.jobs.apply.steps))
      throw new Error("no apply job");
    const steps = doc.jobs.apply.steps.filter(isRecord);
    const at = (uses: string): number =>
      steps.findIndex((st) => typeof st.uses === "string" && st.uses.startsWith(uses));
    const apply = steps.findIndex((st) => typeof st.run === "string" && st.run.includes("flowrules apply"));
    const restore = steps[at("actions/cache/restore@")];
    const save = steps[at("actions/cache/save@")];
    expect(at("actions/cache/restore@")).toBeGreaterThanOrEqual(0);
    expect(at("actions/cache/restore@")).toBeLessThan(apply);
    expect(at("actions/cache/save@")).toBeGreaterThan(apply);
    const dir = isRecord(restore?.with) ? restore.with.path : undefined;
    expect(dir).toBe(".flowrules/state");
    expect(isRecord(save?.with) && save.with.path).toBe(dir);
    // a unique key per run (cache keys are immutable) and a prefix to restore the newest
    expect(isRecord(save?.with) && save.with.key).toBe(isRecord(restore?.with) ? restore.with.key : "");
    expect(String(isRecord(restore?.with) ? restore.with["restore-keys"] : "")).toMatch(/^flowrules-state-$/m);
    expect(s?.text).toMatch(/npx flowrules apply rules\/ --auto-approve --state \.flowrules\/state /);

    const g = examples.find((e) => e.file === "gitlab/gitlab-ci.yml")?.docs[0];
    if (!isRecord(g) || !isRecord(g.apply)) throw new Error("no GitLab apply job");
    const caches = Array.isArray(g.apply.cache) ? g.apply.cache.filter(isRecord) : [];
    const stateCache = caches.find((c) => JSON.stringify(c.paths).includes(".flowrules/state"));
    expect(stateCache?.when).toBe("always");
    expect(isRecord(g.apply.variables) && g.apply.variables.FLOWRULES_STATE).toBe(".flowrules/state");
  });

  it("GitLab: one apply at a time (resource_group), plan on merge requests", () => {
    const g = examples.find((e) => e.file === "gitlab/gitlab-ci.yml")?.docs[0];
    expect(isRecord(g)).toBe(true);
    if (!isRecord(g)) return;
    expect(isRecord(g.apply) && g.apply.resource_group).toBe("flowrules-apply");
    expect(JSON.stringify(g.plan)).toContain("merge_request_event");
    expect(JSON.stringify(g.plan)).toContain(
      'npx flowrules plan rules/ --compare \\"origin/$CI_MERGE_REQUEST_TARGET_BRANCH_NAME\\"',
    );
  });

  it("Kubernetes CronJob: concurrencyPolicy Forbid and the key from a Secret", () => {
    const cron = examples
      .find((e) => e.file === "kubernetes/cronjob.yaml")
      ?.docs.find((d) => isRecord(d) && d.kind === "CronJob");
    expect(isRecord(cron)).toBe(true);
    const text = JSON.stringify(cron);
    expect(isRecord(cron) && isRecord(cron.spec) && cron.spec.concurrencyPolicy).toBe("Forbid");
    expect(text).toContain('"secretKeyRef"');
    // exit code 2 would fail the Job: the CronJob must not ask for it
    expect(text).not.toContain("--detailed-exitcode");
  });

  it("the GitLab note script is valid JavaScript", async () => {
    const script = (await exampleFiles()).find((f) => f.endsWith("upsert-mr-note.mjs"));
    expect(script).toBeDefined();
    await expect(promisify(execFile)(process.execPath, ["--check", script ?? ""])).resolves.toBeDefined();
  });
  it("Kubernetes Deployment of watch: one replica, Recreate, liveness on /healthz, readiness on /readyz, state on a volume, key from a Secret", () => {
    const file = deploy.find((e) => e.file === "kubernetes/watch.yaml");
    expect(file).toBeDefined();
    const dep = file?.docs.find((d) => isRecord(d) && d.kind === "Deployment");
    const pvc = file?.docs.find((d) => isRecord(d) && d.kind === "PersistentVolumeClaim");
    if (!isRecord(dep) || !isRecord(dep.spec) || !isRecord(pvc) || !isRecord(pvc.metadata))
      throw new Error("no Deployment and claim");
    expect(dep.apiVersion).toBe("apps/v1");
    expect(dep.spec.replicas).toBe(1);
    expect(dep.spec.strategy).toEqual({ type: "Recreate" });
    const template = dep.spec.template;
    const pod = isRecord(template) && isRecord(template.spec) ? template.spec : {};
    const containers = Array.isArray(pod.containers) ? pod.containers.filter(isRecord) : [];
    expect(containers).toHaveLength(1);
    const c = containers[0] ?? {};
    const words = containerInvocations(c)[0] ?? [];
    expect(words[0]).toBe("watch");
    expect(checkInvocation(buildProgram(), words)).toEqual([]);
    const flag = (name: string): string | undefined => words[words.indexOf(name) + 1];
    expect(words).toContain("--apply");
    const port = Number(flag("--metrics-port"));
    expect(port).toBeGreaterThan(0);
    // probes reach the pod's address: the endpoint must not listen on loopback only
    expect(flag("--metrics-host")).toBe("0.0.0.0");
    const ports = Array.isArray(c.ports) ? c.ports.filter(isRecord) : [];
    const named = ports.find((p) => p.containerPort === port);
    expect(named).toBeDefined();
    // liveness on /healthz (the process cannot work), readiness on /readyz (rules held back by their data)
    for (const [probe, path] of [
      [c.readinessProbe, "/readyz"],
      [c.livenessProbe, "/healthz"],
    ] as const) {
      const get = isRecord(probe) && isRecord(probe.httpGet) ? probe.httpGet : undefined;
      expect(get?.path).toBe(path);
      expect(get?.port === port || get?.port === named?.name).toBe(true);
    }
    // the state dir is a mounted volume backed by the claim
    const state = flag("--state");
    const mounts = Array.isArray(c.volumeMounts) ? c.volumeMounts.filter(isRecord) : [];
    const mount = mounts.find((m) => m.mountPath === state);
    expect(mount).toBeDefined();
    const volumes = Array.isArray(pod.volumes) ? pod.volumes.filter(isRecord) : [];
    const volume = volumes.find((v) => v.name === mount?.name);
    expect(isRecord(volume?.persistentVolumeClaim) && volume.persistentVolumeClaim.claimName).toBe(pvc.metadata.name);
    expect(JSON.stringify(c.env)).toContain('"secretKeyRef"');
    // non-root, as the CronJob
    expect(isRecord(pod.securityContext) && pod.securityContext.runAsNonRoot).toBe(true);
    expect(isRecord(c.securityContext) && c.securityContext.allowPrivilegeEscalation).toBe(false);
  });

  it("systemd unit and Dockerfile of watch: existing flags, SIGTERM, reload by SIGHUP, no key; non-root Node 20 slim with the CLI as entrypoint", async () => {
    const unit = await readFile(join(DEPLOY_DIR, "systemd", "flowrules-watch.service"), "utf8");
    const exec = /^ExecStart=(.*)$/m.exec(unit)?.[1] ?? "";
    const words = exec.replace(/'$/, "").split(/\s+/);
    const at = words.findIndex((w) => w.endsWith("/flowrules"));
    expect(at).toBeGreaterThan(-1);
    expect(checkInvocation(buildProgram(), words.slice(at + 1))).toEqual([]);
    expect(words.slice(at + 1, at + 2)).toEqual(["watch"]);
    expect(unit).toMatch(/^KillSignal=SIGTERM$/m);
    // `systemctl reload` sends SIGHUP, which reloads the rules (the exec'd watcher is the main process)
    expect(unit).toMatch(/^ExecReload=\/bin\/kill -HUP \$MAINPID$/m);
    // the rules repository's own dependency (README.md, "A rules repository"), as CI runs it
    expect(exec).toMatch(/\bexec \/srv\/flowrules\/node_modules\/\.bin\/flowrules watch \/srv\/flowrules\/rules /);
    expect(unit).toMatch(/npm ci --omit=dev/);
    expect(unit).toMatch(/^StateDirectory=/m);
    expect(unit).toMatch(/^Restart=on-failure$/m);
    expect(unit).not.toMatch(/^Environment=FLOWRULES_API_KEY/m);
    for (const key of USERS.map((u) => u.key)) expect(unit).not.toContain(key);

    const docker = await readFile(new URL("../../Dockerfile", import.meta.url), "utf8");
    const froms = [...docker.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]);
    expect(froms.length).toBeGreaterThan(0);
    for (const f of froms) expect(f).toMatch(/^node:20-slim\b/);
    const users = [...docker.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]);
    expect(users.at(-1)).toBe("node");
    expect(docker).toMatch(/^ENTRYPOINT \["flowrules"\]$/m);
    expect(docker).not.toMatch(/FLOWRULES_API_KEY=/);
  });
});
