/**
 * The keys that govern how a rule runs in production (README.md, "Operating rules in production"): `mode`
 * (enforce or audit), `exclude` (instance ids and tags never matched) and `active` (when the rule runs at all).
 * The schema checks shapes (and types them: `RuleInput`, ./schema.ts); this checks values (dates, day names, hour
 * ranges, time zones, tag text) and reports each problem at its own line.
 */
import type { RuleExclusions, RuleMode } from "./types.js";
import { defined } from "../model/defined.js";
import type { RuleInput } from "./schema.js";
import { DAY_NAMES, isTimeZone, parseHours, type ActiveWindow } from "./active-window.js";
import { posIn, report, type RuleContext } from "./compile-context.js";
import { didYouMean } from "../text/suggest.js";


export interface RuleOperations {
  mode: RuleMode;
  exclude?: RuleExclusions;
  active?: ActiveWindow;
}

/**
 * Why a text cannot be a tag, or undefined when it can. The service's tag filter is comma-separated (and trims
 * nothing), so a tag holding a comma, a control character or surrounding spaces could never be asked for.
 */
export function tagProblem(tag: string): string | undefined {
  if (tag.trim() === "") return "a tag cannot be empty";
  if (tag.includes(",")) return "a tag cannot hold a comma (tags are sent comma-separated)";
  if (/[\u0000-\u001f\u007f]/.test(tag)) return "a tag cannot hold control characters (newlines, tabs)";
  if (tag !== tag.trim()) return "a tag cannot start or end with spaces";
  if (tag.length > 100) return "a tag is at most 100 characters";
  return undefined;
}

function instant(ctx: RuleContext, raw: unknown, key: "from" | "until"): number | undefined {
  if (raw === undefined) return undefined;
  const text = raw instanceof Date ? raw.toISOString() : typeof raw === "string" ? raw : undefined;
  const ms = text !== undefined && /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms)) {
    report(ctx, "error", "active", posIn(ctx, "active", key),
      `active.${key} of ${ctx.label} must be an ISO 8601 date or date-time (2026-01-15 or 2026-01-15T08:00:00Z), got ${JSON.stringify(raw)}`);
    return undefined;
  }
  return ms;
}

function compileActive(ctx: RuleContext, raw: NonNullable<RuleInput["active"]>): ActiveWindow | undefined {
  const before = ctx.diagnostics.length;
  const timezone = raw.timezone ?? "UTC";
  if (!isTimeZone(timezone)) {
    report(ctx, "error", "active", posIn(ctx, "active", "timezone"),
      `active.timezone of ${ctx.label}: unknown time zone "${timezone}"; use an IANA name such as UTC, Europe/Berlin, America/New_York`);
  }
  const from = instant(ctx, raw.from, "from");
  const until = instant(ctx, raw.until, "until");
  if (from !== undefined && until !== undefined && until <= from) {
    report(ctx, "error", "active", posIn(ctx, "active", "until"),
      `active.until of ${ctx.label} (${new Date(until).toISOString()}) must be after active.from (${new Date(from).toISOString()})`);
  }
  let days: number[] | undefined;
  if (raw.days !== undefined) {
    days = [];
    for (const [i, d] of raw.days.entries()) {
      const name = d.toLowerCase();
      const idx = (DAY_NAMES as readonly string[]).indexOf(name);
      if (idx < 0) {
        report(ctx, "error", "active", posIn(ctx, "active", "days", i),
          `active.days of ${ctx.label}: unknown day ${JSON.stringify(d)}${didYouMean(String(d), [...DAY_NAMES]) || ""}; days are ${DAY_NAMES.join(", ")}`);
      } else if (!days.includes(idx)) days.push(idx);
    }
  }
  let hours: ActiveWindow["hours"];
  if (raw.hours !== undefined) {
    const h = parseHours(raw.hours);
    if ("error" in h) report(ctx, "error", "active", posIn(ctx, "active", "hours"), `active.hours of ${ctx.label}: ${h.error}`);
    else hours = { ...h, text: raw.hours.trim() };
  }
  if (ctx.diagnostics.length > before) return undefined;
  return {
    timezone,
    ...defined({ from, until, days, hours }),
  };
}

function compileExclude(ctx: RuleContext, raw: NonNullable<RuleInput["exclude"]>): RuleExclusions {
  const ids = raw.instance_ids ?? [];
  const tags: string[] = [];
  if (raw.tags !== undefined) {
    for (const [i, t] of raw.tags.entries()) {
      const problem = tagProblem(t);
      if (problem) report(ctx, "error", "exclude", posIn(ctx, "exclude", "tags", i), `exclude.tags of ${ctx.label}: ${JSON.stringify(t)}: ${problem}`);
      else tags.push(t);
    }
  }
  return { instance_ids: [...new Set(ids)], tags: [...new Set(tags)] };
}

/**
 * Reads `mode`, `exclude` and `active` of one rule: of the keys the schema passed only (a key it reported is not
 * checked again: one message per mistake).
 */
export function compileOperations(ctx: RuleContext, r: Partial<RuleInput>): RuleOperations {
  const out: RuleOperations = { mode: r.mode === "audit" ? "audit" : "enforce" };
  if (r.exclude !== undefined) {
    const ex = compileExclude(ctx, r.exclude);
    if (ex.instance_ids.length > 0 || ex.tags.length > 0) out.exclude = ex;
  }
  if (r.active !== undefined) {
    const w = compileActive(ctx, r.active);
    if (w) out.active = w;
  }
  return out;
}
