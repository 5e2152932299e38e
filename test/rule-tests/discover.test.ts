/** Which test files `flowrules test` runs and which rule files it loads. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { discover } from "../../src/rule-tests/discover.js";
import { looksLikeRuleFile } from "../../src/rules/files.js";
import { tempFiles } from "./helpers.js";

const RULE = "version: 1\nrules: []\n";

describe("discover", () => {
  it("a folder: every test file below it, its rule files, and not the CI YAML kept beside them", async () => {
    const dir = await tempFiles({
      "a/a.yaml": RULE,
      "a/a.test.yaml": "version: 1\n",
      "b/deep/b.yml": RULE,
      "b/deep/b.test.yml": "version: 1\n",
      "ci/workflow.yml": "name: plan\non: [pull_request]\njobs: {}\n",
      "ci/cronjob.yaml": "apiVersion: batch/v1\nkind: CronJob\n",
    });
    const d = await discover([dir]);
    expect(d.testFiles).toEqual([join(dir, "a/a.test.yaml"), join(dir, "b/deep/b.test.yml")]);
    expect(d.rulePaths).toEqual([join(dir, "a/a.yaml"), join(dir, "b/deep/b.yml")]);
    expect(d.skipped.sort()).toEqual([join(dir, "ci/cronjob.yaml"), join(dir, "ci/workflow.yml")]);
    expect(d.problems).toEqual([]);
  });

  it("a rule file brings its sibling test; a test file brings its companion rule file", async () => {
    const dir = await tempFiles({ "x.yaml": RULE, "x.test.yaml": "", "y.yaml": RULE, "z.test.yml": "", "z.yml": RULE });
    expect(await discover([join(dir, "x.yaml")])).toMatchObject({
      testFiles: [join(dir, "x.test.yaml")],
      rulePaths: [join(dir, "x.yaml")],
    });
    expect(await discover([join(dir, "z.test.yml")])).toMatchObject({
      testFiles: [join(dir, "z.test.yml")],
      rulePaths: [join(dir, "z.yml")],
    });
    expect((await discover([join(dir, "nope")])).problems).toEqual([
      { path: join(dir, "nope"), message: `no such file or folder: ${join(dir, "nope")}` },
    ]);
  });

  it("recognises rule files by their top-level keys", () => {
    expect(looksLikeRuleFile("# comment\nversion: 1\n")).toBe(true);
    expect(looksLikeRuleFile("rules:\n  - name: x\n")).toBe(true);
    expect(looksLikeRuleFile("jobs:\n  version: 3\n")).toBe(false);
  });
});
