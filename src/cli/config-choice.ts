/**
 * Which config file a run reads and which profile it asks for (./profiles.ts reads the file): plain, without YAML or
 * zod, so that a run with no config file and no profile named (validate, most often) never loads them
 * (docs/performance.md, "Start-up").
 */
import { existsSync } from "node:fs";
import { relative, resolve } from "node:path";
import { CONFIG_FILE } from "../model/defaults.js";
import { findConfigFile } from "../fs/config-file.js";
import { CONFIG_ENV, PROFILE_ENV } from "./flags.js";

/** The config file a run reads (or would, once written), and what named it. */
export interface ConfigFileChoice {
  /** absolute; when nothing names one and none is found, flowrules.config.yaml in cwd (which may not exist) */
  abs: string;
  /** as the user would name it (relative to cwd when below it) */
  shown: string;
  /** "--config", its variable, "found" (cwd or a parent up to the repository root) or "none" (there is none) */
  from: "--config" | typeof CONFIG_ENV | "found" | "none";
}

/** The config file: --config, else its variable, else the nearest flowrules.config.yaml (src/fs/config-file.ts). */
export function configFileChoice(
  opts: { config?: string | undefined },
  env: Record<string, string | undefined>,
  cwd = process.cwd(),
): ConfigFileChoice {
  const fromEnv = env[CONFIG_ENV];
  const named =
    opts.config !== undefined
      ? ({ file: opts.config, from: "--config" } as const)
      : fromEnv
        ? ({ file: fromEnv, from: CONFIG_ENV } as const)
        : undefined;
  const found = named ? undefined : findConfigFile(cwd);
  const abs = named ? resolve(cwd, named.file) : (found ?? resolve(cwd, CONFIG_FILE));
  return { abs, shown: shownPath(abs, cwd), from: named?.from ?? (found ? "found" : "none") };
}

function shownPath(abs: string, cwd: string): string {
  const rel = relative(cwd, abs);
  return rel && !rel.startsWith("..") ? rel : abs;
}

/** The profile named by --profile or its variable (an empty variable names none), and which of them named it. */
export function profileAsked(
  opts: { profile?: string | undefined },
  env: Record<string, string | undefined>,
): { asked: string | undefined; from: "--profile" | typeof PROFILE_ENV } {
  return {
    asked: opts.profile ?? (env[PROFILE_ENV] || undefined),
    from: opts.profile !== undefined ? "--profile" : PROFILE_ENV,
  };
}

/** Whether there is no config file to read: none named or found, or the one found is gone. */
export function noConfigFile(file: ConfigFileChoice): boolean {
  return file.from === "none" || (file.from === "found" && !existsSync(file.abs));
}
