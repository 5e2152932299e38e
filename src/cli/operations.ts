/** Flags shared by `plan`, `apply` and `explain` for running rules in production: the opt-out tag and webhooks. */
import type { Command } from "commander";
import { DEFAULT_OPT_OUT_TAG } from "../engine/exclusions.js";
import { UserError } from "../model/errors.js";
import { notifyUrls } from "../notify/urls.js";
import { tagProblem } from "../rules/operations.js";

export const OPT_OUT_ENV = "FLOWRULES_OPT_OUT_TAG";

const collect = (v: string, acc: string[]): string[] => [...acc, v];

export function addOptOutOption(cmd: Command): Command {
  return cmd.option(
    "--opt-out-tag <tag>",
    `instances carrying this tag are changed by no rule (env ${OPT_OUT_ENV}; default ${DEFAULT_OPT_OUT_TAG}; "" turns it off)`,
  );
}

export function addNotifyOption(cmd: Command): Command {
  return cmd.option("--notify <url>", "POST a JSON summary to this webhook at the end (repeatable; env FLOWRULES_NOTIFY_URL, comma-separated)", collect, []);
}

/** The opt-out tag in effect: the flag, else the environment, else the default; empty turns it off. */
export function optOutTag(opts: Record<string, unknown>, env: Record<string, string | undefined>): string | undefined {
  const raw = typeof opts.optOutTag === "string" ? opts.optOutTag : (env[OPT_OUT_ENV] ?? DEFAULT_OPT_OUT_TAG);
  if (raw === "") return undefined;
  const problem = tagProblem(raw);
  if (problem) {
    const from = typeof opts.optOutTag === "string" ? "--opt-out-tag" : OPT_OUT_ENV;
    throw new UserError(`${from} ${JSON.stringify(raw.slice(0, 80))}: ${problem}; give a tag as the product shows it, or "" to turn the opt-out off`);
  }
  return raw;
}

export function notifyTargets(opts: Record<string, unknown>, env: Record<string, string | undefined>, insecureHttp: boolean): URL[] {
  const flags = Array.isArray(opts.notify) ? opts.notify.filter((x): x is string => typeof x === "string") : [];
  return notifyUrls(flags, env, insecureHttp);
}
