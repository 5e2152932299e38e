/**
 * The plan file as `apply` reads it: a zod schema of the JSON plan format (docs/design.md, "The JSON plan"), plus the checks that must
 * all pass before a single request is sent — format version, shape (named by JSON path), digest (tampering), plan
 * errors, and base URL. Each refusal is a UserError with one clear line.
 */
import { open, readFile, stat } from "node:fs/promises";
import { z } from "zod";
import { describeIssue } from "../api/schemas.js";
import { normaliseBaseUrl } from "../api/url-guard.js";
import { UserError } from "../model/errors.js";
import { planDigest } from "./digest.js";
import { streamPlanFile } from "./stream-read.js";
import { ChangeSchema, SignedPlanSchema, SUPPORTED_FORMAT_VERSION } from "./schema.js";
import type { Plan, PlanChange, PlanFile } from "./types.js";
import { errorMessage } from "../model/guards.js";

/** A plan file larger than this is not a plan we wrote (about 1 kB a change: far beyond any max_instances). */
const MAX_PLAN_BYTES = 512 * 1024 * 1024;

/**
 * Checks one change beyond its shape (src/actions: the kind is known and its request says exactly what kind,
 * instance and step say). Passed in by apply, which knows the action kinds; this package does not.
 */
export type ChangeCheck = (change: PlanChange, issue: (path: PropertyKey[], message: string) => void) => void;

function uniqueChangeIds(p: { changes: Array<{ id: string }> }, ctx: z.RefinementCtx): void {
  const seen = new Map<string, number>();
  p.changes.forEach((c, i) => {
    const first = seen.get(c.id);
    if (first !== undefined) ctx.addIssue({ code: "custom", path: ["changes", i, "id"], message: `duplicate change id (also $.changes[${first}].id)` });
    else seen.set(c.id, i);
  });
}

export const PlanFileSchema = SignedPlanSchema.superRefine(uniqueChangeIds);

/** The plan with its changes already parsed one by one (see parseInPlace): they are taken as they are. */
const PlanWithParsedChanges = SignedPlanSchema.extend({
  changes: z.array(z.custom<PlanChange>(() => true)),
}).superRefine(uniqueChangeIds);

/** Two base URLs name the same service (scheme and host case, default port and trailing slashes do not matter). */
export function sameBaseUrl(a: string, b: string): boolean {
  try {
    return normaliseBaseUrl(a, true).href === normaliseBaseUrl(b, true).href;
  } catch {
    return false;
  }
}

/**
 * Tells a plan file from rule paths by content: a readable file holding a JSON object with `format_version`.
 * YAML rule files and folders are not plans.
 */
export async function looksLikePlanFile(path: string): Promise<boolean> {
  try {
    const s = await stat(path);
    if (!s.isFile() || s.size > MAX_PLAN_BYTES) return false;
    // the head is enough: plans start with `{` and name their format_version first; loadPlanFile checks the rest
    const fh = await open(path, "r");
    try {
      const { buffer, bytesRead } = await fh.read(Buffer.alloc(4096), 0, 4096, 0);
      const head = buffer.subarray(0, bytesRead).toString("utf8");
      return /^\s*\{/.test(head) && /"format_version"\s*:/.test(head);
    } finally {
      await fh.close();
    }
  } catch {
    return false;
  }
}

export interface LoadedPlan {
  plan: PlanFile;
  /** the file's digest, verified */
  digest: string;
  file: string;
}

export interface LoadOptions {
  /**
   * Read to be shown, not applied (`flowrules show`): any base URL, and a plan that recorded planning errors is
   * shown with them instead of refused. Every other check (format version, digest, shape) still holds.
   */
  toShow?: boolean;
  /**
   * Keep only what apply needs of each change (no before/after/instance_name) and no reports: about half the memory
   * per change at 100,000 changes.
   */
  compact?: boolean;
}

/**
 * Reads and checks a plan file; every refusal happens here, before any request.
 * `expectedBaseUrl` is the configured service (--base-url / FLOWRULES_BASE_URL).
 *
 * A good plan is read as a stream (stream-read.ts), never whole; a file that fails any check there is read whole
 * again, and refused in the words below.
 */
export async function loadPlanFile(file: string, expectedBaseUrl: string, check?: ChangeCheck, opts: LoadOptions = {}): Promise<LoadedPlan> {
  const passes = (c: PlanChange): boolean => {
    let good = true;
    check?.(c, () => void (good = false));
    return good;
  };
  const streamed = await streamPlanFile(file, passes, opts.compact === true).catch(() => undefined);
  if (streamed && (opts.toShow === true || sameBaseUrl(streamed.plan.base_url, expectedBaseUrl))) return { plan: streamed.plan, digest: streamed.digest, file };
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    const code = typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : "";
    throw new UserError(code === "ENOENT" ? `no plan file ${file}` : `cannot read the plan file ${file}: ${String(err)}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
    text = ""; // the parsed plan is all we keep: a 100,000-change file is tens of MB of text
  } catch (err) {
    // JSON.parse quotes the text around the mistake, newlines included: keep the refusal on one short line
    const why = errorMessage(err).replace(/\s+/g, " ");
    throw new UserError(`${file} is not valid JSON (${why.length > 160 ? `${why.slice(0, 160)}…` : why}); write plans with \`flowrules plan --out\``);
  }
  return checkPlan(raw, file, expectedBaseUrl, check, opts.toShow === true);
}

/** A value quoted in a refusal: short, whatever the file holds. */
function clipJson(v: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = typeof v;
  }
  return s.length > 60 ? `${s.slice(0, 60)}…` : s;
}

function refuseShape(file: string, error: z.ZodError, prefix: PropertyKey[] = []): never {
  const { jsonPath, problem } = describeIssue(error);
  const path = prefix.length > 0 ? `$${prefix.map((k) => (typeof k === "number" ? `[${k}]` : `.${String(k)}`)).join("")}${jsonPath.slice(1)}` : jsonPath;
  throw new UserError(`${file} is not a valid plan at ${path}: ${problem}`);
}

/**
 * Validates the plan with each change parsed on its own and put back in place of its raw form, so a large plan is
 * not copied whole by the schema (the raw changes become garbage one by one).
 */
function parseInPlace(raw: Record<string, unknown>, file: string, check?: ChangeCheck): PlanFile {
  const changes = raw.changes;
  if (Array.isArray(changes)) {
    const schema = check
      ? ChangeSchema.superRefine((c, ctx) => check(c, (path, message) => void ctx.addIssue({ code: "custom", path, message })))
      : ChangeSchema;
    for (let i = 0; i < changes.length; i++) {
      const one = schema.safeParse(changes[i]);
      if (!one.success) refuseShape(file, one.error, ["changes", i]);
      changes[i] = one.data;
    }
  }
  const parsed = (Array.isArray(changes) ? PlanWithParsedChanges : PlanFileSchema).safeParse(raw);
  if (!parsed.success) refuseShape(file, parsed.error);
  return parsed.data;
}

/** The checks of loadPlanFile on already parsed JSON. */
export function checkPlan(raw: unknown, file: string, expectedBaseUrl: string, check?: ChangeCheck, toShow = false): LoadedPlan {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new UserError(`${file} is not a plan: expected a JSON object`);
  const version = (raw as Record<string, unknown>).format_version;
  if (version !== SUPPORTED_FORMAT_VERSION) {
    throw new UserError(
      `${file} has ${version === undefined ? "no format_version" : `format_version ${clipJson(version)}`}; this flowrules applies format_version ${SUPPORTED_FORMAT_VERSION} only — plan again with this version`,
    );
  }
  // the digest covers the file as written (unknown keys too), not our parsed view of it: computed before the
  // changes are replaced by their parsed form below, reported after the shape checks
  let actual: string;
  try {
    actual = planDigest(raw as Plan & { digest?: string });
  } catch (err) {
    // canonical JSON recurses: a file nested thousands deep is no plan flowrules wrote
    if (err instanceof RangeError) throw new UserError(`${file} is nested too deeply to be a plan; write plans with \`flowrules plan --out\``);
    throw err;
  }
  const plan = parseInPlace(raw as Record<string, unknown>, file, check);
  if (actual !== plan.digest) {
    throw new UserError(`${file} does not match its digest (${plan.digest}): it was edited after it was planned; refusing to ${toShow ? "show" : "apply"} it — plan again`);
  }
  if (!toShow && plan.errors.length > 0) {
    const first = plan.errors[0];
    throw new UserError(
      `${file} records ${plan.errors.length} planning error${plan.errors.length === 1 ? "" : "s"} (first: ${first?.message ?? "?"}); ` +
        `a plan that failed is not applied — fix the rules and plan again`,
    );
  }
  if (!toShow && !sameBaseUrl(plan.base_url, expectedBaseUrl)) {
    throw new UserError(
      `${file} was planned against ${plan.base_url}, but the configured service is ${expectedBaseUrl} (--base-url / FLOWRULES_BASE_URL); refusing to apply it elsewhere`,
    );
  }
  return { plan, digest: plan.digest, file };
}
