#!/usr/bin/env node
/**
 * `npm run build:extra` (demo, docs, bench) builds dist/ only when it is stale: right after `npm run build` (or `npm
 * test`, which builds) the demo starts at once instead of compiling everything again. dist/ is fresh when the stamp
 * `npm run build` writes last (dist/.built) is newer than every file the build reads: src/, the tsconfig files,
 * package.json, the lockfile (the bundled yaml's version) and scripts/vendor-yaml.mjs. Anything else (a missing stamp, a newer source) runs the full build, as before.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const STAMP = "dist/.built";

function newest(path) {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let max = s.mtimeMs;
  for (const e of readdirSync(path)) max = Math.max(max, newest(join(path, e)));
  return max;
}

function stampTime() {
  try {
    return statSync(STAMP).mtimeMs;
  } catch {
    return -Infinity;
  }
}

const inputs = [
  "src",
  "tsconfig.json",
  "tsconfig.build.json",
  "package.json",
  "package-lock.json",
  "scripts/vendor-yaml.mjs",
];
const stale = inputs.some((p) => newest(p) >= stampTime());
if (stale) {
  const r = spawnSync("npm", ["run", "build"], { stdio: "inherit", shell: process.platform === "win32" });
  process.exitCode = r.status ?? 1;
} else {
  process.stderr.write("dist/ is up to date with src/ (npm run build wrote it): not rebuilt\n");
}
