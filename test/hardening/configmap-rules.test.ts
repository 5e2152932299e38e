/**
 * Issue 34, point 2: rules as Kubernetes mounts them. A ConfigMap volume holds a timestamped folder
 * (`..2026_11_27_06_00_00.123456789/`), a link `..data` to it, and for each key a link `x.yaml → ..data/x.yaml`.
 * Every verb reads such a folder (the links lead inside it), reads each file once (the `..` entries are not walked),
 * and refuses, in one line and without reading it, a link that leads outside the folder given (a pull request must not
 * point a rule file at a secret and have CI quote it).
 */
import { spawn } from "node:child_process";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { discover } from "../../src/rule-tests/discover.js";
import { listRuleFiles, loadRules } from "../../src/rules/index.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

const EXPENSES = `version: 1
rules:
  - name: approve-small
    workflow: 1042
    select: { status: running, active_step_id: 20111 }
    actions:
      - complete_step: { step: 20111 }
`;
const PEOPLE = `version: 1
rules:
  - name: stop-onboardings
    workflow: 1043
    select: { status: running }
    actions: [abort]
`;
const EXPENSES_TEST = `version: 1
now: "2026-03-02T09:00:00Z"
instances:
  - id: 1
    name: Taxi to the airport
    active_step: 20111
tests:
  - name: a running claim waiting at 20111 is approved
    rule: approve-small
    expect:
      matched: [1]
`;

const STAMP = "..2026_11_27_06_00_00.123456789";

/** A folder laid out as the kubelet lays out a ConfigMap volume with these keys. */
async function configMapVolume(dir: string, files: Record<string, string>): Promise<void> {
  await mkdir(join(dir, STAMP), { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, STAMP, name), text);
  await symlink(STAMP, join(dir, "..data"));
  for (const name of Object.keys(files)) await symlink(join("..data", name), join(dir, name));
}

function mkfifo(path: string): Promise<void> {
  return new Promise((resolve, reject) =>
    spawn("mkfifo", [path]).on("close", (c) => (c === 0 ? resolve() : reject(new Error(`mkfifo ${c}`)))),
  );
}

let dir: string;
beforeAll(async () => {
  dir = await tempDir();
  await configMapVolume(join(dir, "rules"), {
    "expenses.yaml": EXPENSES,
    "people.yaml": PEOPLE,
    "expenses.test.yaml": EXPENSES_TEST,
  });
});

describe("a folder mounted from a ConfigMap", () => {
  it("lists each rule file once, by its link's name, never under ..data or the timestamped folder", async () => {
    const listing = await listRuleFiles([join(dir, "rules")]);
    expect(listing.problems).toEqual([]);
    expect(listing.files).toEqual([join(dir, "rules", "expenses.yaml"), join(dir, "rules", "people.yaml")]);
    const loaded = await loadRules([join(dir, "rules")]);
    expect(loaded.diagnostics).toEqual([]);
    expect(loaded.ruleSet?.rules.map((r) => r.name)).toEqual(["approve-small", "stop-onboardings"]);
    const found = await discover([join(dir, "rules")]);
    expect(found.problems).toEqual([]);
    expect(found.testFiles).toEqual([join(dir, "rules", "expenses.test.yaml")]);
  });

  it("validates and tests from the CLI", async () => {
    const v = await runCli(["validate", "rules"], {}, { cwd: dir });
    expect(v.code, v.stdout + v.stderr).toBe(0);
    expect(v.stdout).toMatch(/valid in 2 files, 2 rules/);
    const t = await runCli(["test", "rules"], {}, { cwd: dir });
    expect(t.code, t.stdout + t.stderr).toBe(0);
    expect(t.stdout).toMatch(/1 passed, 0 failed/);
  });

  it("a link inside the folder to a subfolder is walked once, and a link back up does not loop", async () => {
    const root = join(dir, "nested");
    await mkdir(join(root, "real", "people"), { recursive: true });
    await writeFile(join(root, "real", "people", "people.yaml"), PEOPLE);
    await symlink(join("real", "people"), join(root, "people"));
    await symlink("..", join(root, "real", "up"));
    const listing = await listRuleFiles([root]);
    expect(listing.problems).toEqual([]);
    expect(listing.files).toEqual([join(root, "people", "people.yaml")]);
  });
});

describe("a link that leads outside the folder given", () => {
  it("is refused in one line naming it, and what it leads to is never opened", async () => {
    const root = join(dir, "pr");
    await configMapVolume(root, { "expenses.yaml": EXPENSES });
    // the "secret" is a FIFO: opening it to read would block until a writer came, so a read hangs the test
    const secrets = join(dir, "secrets");
    await mkdir(secrets, { recursive: true });
    await mkfifo(join(secrets, "token.yaml"));
    await symlink(join(secrets, "token.yaml"), join(root, "token.yaml"));
    await symlink(secrets, join(root, "more"));
    await symlink(join(secrets, "gone.yaml"), join(root, "gone.yaml"));
    // a link of another name leading out is let be: nothing reads it
    await symlink("/etc/hostname", join(root, "LICENSE"));

    const listing = await listRuleFiles([root]);
    expect(listing.files).toEqual([join(root, "expenses.yaml")]);
    expect(listing.problems.map((p) => p.message)).toEqual([
      `${join(root, "gone.yaml")} is a symbolic link that leads to nothing: not read`,
      `${join(root, "more")} is a symbolic link that leads outside ${root} (to ${secrets}): not read; a rule file's link must stay inside the folder given`,
      `${join(root, "token.yaml")} is a symbolic link that leads outside ${root} (to ${join(secrets, "token.yaml")}): not read; a rule file's link must stay inside the folder given`,
    ]);

    const v = await runCli(["validate", "pr"], {}, { cwd: dir });
    expect(v.code).toBe(1);
    expect(v.stdout + v.stderr).toMatch(
      /pr\/token\.yaml is a symbolic link that leads outside pr \(to .*secrets\/token\.yaml\): not read/,
    );
    const t = await runCli(["test", "pr"], {}, { cwd: dir });
    expect(t.code).toBe(1);
    expect(t.stdout + t.stderr).toMatch(/pr\/token\.yaml is a symbolic link that leads outside pr/);
  });
});

describe("the shipped Kubernetes example", () => {
  it("mounts one ConfigMap per rules folder, each under the one folder the watcher reads", async () => {
    const text = await readFile(join(process.cwd(), "examples", "deploy", "kubernetes", "watch.yaml"), "utf8");
    const deployment = parseAllDocuments(text)
      .map((d) => d.toJS() as Record<string, unknown>)
      .find((d) => d.kind === "Deployment");
    const pod = (
      deployment as {
        spec: {
          template: {
            spec: {
              containers: Array<{ args: string[]; volumeMounts: Array<{ name: string; mountPath: string }> }>;
              volumes: Array<{ name: string; configMap?: { name: string } }>;
            };
          };
        };
      }
    ).spec.template.spec;
    const container = pod.containers[0]!;
    const rulesPath = container.args[1];
    const fromConfigMaps = pod.volumes.filter((v) => v.configMap).map((v) => v.name);
    expect(fromConfigMaps.length).toBeGreaterThan(1);
    for (const name of fromConfigMaps) {
      const mount = container.volumeMounts.find((m) => m.name === name);
      expect(mount?.mountPath.startsWith(`${rulesPath}/`), name).toBe(true);
    }
    expect(text).toMatch(/--from-file=rules\/people\//);
  });
});
