/**
 * CONTRIBUTING.md stays true where it counts or names things (its "Before you commit" asks for it): the number of
 * verb folders it states is the number in src/cli/verbs, and every repository path it writes in backticks exists.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const TEXT = readFileSync(join(ROOT, "CONTRIBUTING.md"), "utf8");
/** the dummy kind of the measurement "Adding an action kind" tells of: written for it, then kept as a test's kind */
const TOLD_OF = new Set(["src/actions/tag.ts"]);

describe("CONTRIBUTING.md", () => {
  it("states the number of verb folders there are", () => {
    const stated = /There are (\d+) verb folders today/.exec(TEXT)?.[1];
    const folders = readdirSync(join(ROOT, "src/cli/verbs"), { withFileTypes: true }).filter((e) => e.isDirectory());
    expect(folders.length).toBeGreaterThan(10);
    expect(Number(stated)).toBe(folders.length);
  });

  it("names only paths that exist", () => {
    // a path in backticks under a folder of the repository, without a placeholder (<verb>, *) or a line number
    const paths = [...TEXT.matchAll(/`((?:src|test|docs|scripts|bench|schemas)\/[\w./-]+)`/g)]
      .map((m) => m[1]!)
      .filter((p) => !/[<>*]/.test(p) && !TOLD_OF.has(p));
    expect(paths.length).toBeGreaterThan(30);
    expect(paths.filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
  });
});
