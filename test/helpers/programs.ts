/**
 * Tests that need a program the README's setup does not install: zsh and fish (the completion scripts run in them)
 * and headless Chromium (the HTML plan is opened in it). On a developer's machine without one, those tests are
 * skipped and the run ends with one line saying what to install (test/helpers/global-setup.ts prints it); in CI
 * (`CI` set, as .ci/run does after installing them) a missing program fails them, so CI still proves everything.
 */
import { accessSync, appendFileSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { it, type TestFunction } from "vitest";
import { PACKAGES, SKIPS_ENV, type Program } from "./skips.js";

export type { Program } from "./skips.js";

/** Headless Chromium: Debian's chromium-headless-shell, or the binary FLOWRULES_CHROMIUM names. */
export const CHROMIUM = process.env.FLOWRULES_CHROMIUM ?? "/usr/bin/chromium-headless-shell";

const executable = (file: string): boolean => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** Whether the program is there: a shell on PATH (as the tests run it), Chromium at CHROMIUM. */
export function installed(program: Program, env: NodeJS.ProcessEnv = process.env): boolean {
  if (program === "chromium") return executable(CHROMIUM);
  return (env.PATH ?? "").split(delimiter).some((dir) => dir !== "" && executable(join(dir, program)));
}

/** CI as the common CI services (and .ci/run) set it. */
export function inCI(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI;
  return ci !== undefined && ci !== "" && ci !== "0" && ci !== "false";
}

type TestArgs = [name: string, fn?: TestFunction, timeout?: number];

export interface Needs {
  /** every program is there */
  available: boolean;
  /** `it` for a test that needs the programs: skipped without them (failing in CI), and counted for the summary */
  it: (...args: TestArgs) => void;
}

/**
 * `needs("completion", ["zsh"]).it(name, fn)`: the test when zsh is there; otherwise skipped and noted as one
 * "completion" test needing zsh, or, in CI, failing with what to install.
 */
export function needs(what: string, programs: Program[]): Needs {
  const missing = programs.filter((p) => !installed(p));
  if (missing.length === 0) return { available: true, it: (...args: TestArgs) => it(...args) };
  const install = `apt-get install -y ${missing.map((p) => PACKAGES[p]).join(" ")}`;
  if (inCI()) {
    return {
      available: false,
      it: (name: string) =>
        it(name, () => {
          const what = missing.map((p) =>
            p === "chromium" ? `Chromium (not at ${CHROMIUM}; FLOWRULES_CHROMIUM names another)` : `${p} (not on PATH)`,
          );
          throw new Error(`${what.join(" and ")} missing, and CI runs every test: ${install} (.ci/run does)`);
        }),
    };
  }
  return {
    available: false,
    it: (name: string) => {
      const notes = process.env[SKIPS_ENV];
      if (notes) appendFileSync(notes, `${JSON.stringify({ what, missing })}\n`);
      // skipped by design outside CI: the run's summary line names the program to install
      it.skip(name);
    },
  };
}
