/**
 * The plan file as `apply` reads it: a zod schema of the DESIGN section 3 JSON contract, plus the checks that must
 * all pass before a single request is sent — format version, shape (named by JSON path), digest (tampering), plan
 * errors, and base URL. Each refusal is a UserError with one clear line.
 */
import { open, readFile, stat } from "node:fs/promises";
import { z } from "zod";
import { CompleteStepBodySchema, describeIssue } from "../api/schemas.js";
import { normaliseBaseUrl } from "../api/url-guard.js";
import { UserError } from "../model/errors.js";
import { BULK_ABORT_PATH } from "../actions/abort.js";
import { planDigest } from "./digest.js";
import type { Plan } from "./types.js";

/** The plan format this version of apply executes. */
export const SUPPORTED_FORMAT_VERSION = 1;

/** A plan file larger than this is not a plan we wrote (about 1 kB a change: far beyond any max_instances). */
const MAX_PLAN_BYTES = 512 * 1024 * 1024;

const isoDateTime = z.string().refine((s) => !Number.isNaN(Date.parse(s)), { message: "expected an ISO 8601 date-time" });

const PreconditionSchema = z.object({
  status: z.literal("running"),
  active_step_id: z.number().int().nonnegative().optional(),
  last_updated_time: isoDateTime.optional(),
});

const ChangeSchema = z
  .object({
    id: z.string().min(1),
    rule: z.string().min(1),
    instance_id: z.number().int().nonnegative(),
    instance_name: z.string().nullish().transform((v) => v ?? ""),
    process_id: z.number().int().nonnegative(),
    kind: z.enum(["complete_step", "save_step", "abort"]),
    step_id: z.number().int().nonnegative().optional(),
    request: z.object({ method: z.literal("POST"), path: z.string().min(1), body: z.unknown() }),
    before: z.record(z.string(), z.unknown()),
    after: z.record(z.string(), z.unknown()),
    precondition: PreconditionSchema,
  })
  .superRefine((c, ctx) => {
    // apply sends request.body as it stands: it must say exactly what kind, instance and step say, so what the
    // reviewer read (kind, step) is what is executed
    const issue = (path: PropertyKey[], message: string): void => void ctx.addIssue({ code: "custom", path, message });
    if (c.kind === "abort") {
      if (c.request.path !== BULK_ABORT_PATH) issue(["request", "path"], `an abort is sent to ${BULK_ABORT_PATH}`);
      const body = z.object({ ids: z.tuple([z.literal(c.instance_id)]) }).safeParse(c.request.body);
      if (!body.success) issue(["request", "body"], `an abort's body must be {"ids": [${c.instance_id}]}`);
      return;
    }
    if (c.step_id === undefined) {
      issue(["step_id"], `a ${c.kind} change needs step_id`);
      return;
    }
    const path = `/instances/${c.instance_id}/complete_step/`;
    if (c.request.path !== path) issue(["request", "path"], `expected ${path}`);
    const body = CompleteStepBodySchema.safeParse(c.request.body);
    if (!body.success) {
      const d = describeIssue(body.error);
      issue(["request", "body", ...jsonPathKeys(d.jsonPath)], d.problem);
      return;
    }
    if (body.data.step_id !== c.step_id) issue(["request", "body", "step_id"], `expected ${c.step_id} (the change's step_id)`);
    const mode = c.kind === "complete_step" ? "complete" : "save";
    if ((body.data.mode ?? "complete") !== mode) issue(["request", "body", "mode"], `a ${c.kind} change is sent with mode "${mode}"`);
    if (c.precondition.active_step_id !== undefined && c.precondition.active_step_id !== c.step_id) {
      issue(["precondition", "active_step_id"], `expected ${c.step_id} (the change's step_id)`);
    }
  });

const PlanObject = z.object({
  format_version: z.literal(SUPPORTED_FORMAT_VERSION),
  flowrules_version: z.string(),
  created_at: isoDateTime,
  base_url: z.string().min(1),
  rules_digest: z.string(),
  rules: z.array(z.unknown()),
  changes: z.array(ChangeSchema),
  reports: z.array(z.unknown()),
  errors: z.array(
    z.object({ code: z.string(), message: z.string(), rule: z.string().optional(), instance_id: z.number().optional() }),
  ),
  summary: z.record(z.string(), z.unknown()),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, { message: 'expected "sha256:" and 64 hex digits' }),
});

function uniqueChangeIds(p: { changes: Array<{ id: string }> }, ctx: z.RefinementCtx): void {
  const seen = new Map<string, number>();
  p.changes.forEach((c, i) => {
    const first = seen.get(c.id);
    if (first !== undefined) ctx.addIssue({ code: "custom", path: ["changes", i, "id"], message: `duplicate change id (also $.changes[${first}].id)` });
    else seen.set(c.id, i);
  });
}

export const PlanFileSchema = PlanObject.superRefine(uniqueChangeIds);

/** The plan with its changes already parsed one by one (see parseInPlace): they are taken as they are. */
const PlanWithParsedChanges = PlanObject.extend({
  changes: z.array(z.custom<z.infer<typeof ChangeSchema>>(() => true)),
}).superRefine(uniqueChangeIds);

export type PlanFile = z.infer<typeof PlanFileSchema>;
export type ApplyChange = PlanFile["changes"][number];
export type StepChange = ApplyChange & { kind: "complete_step" | "save_step"; step_id: number };

export function isStepChange(c: ApplyChange): c is StepChange {
  return c.kind !== "abort" && c.step_id !== undefined;
}

/** `$.a[2].b` → ["a", 2, "b"] (for nesting a body issue under request.body). */
function jsonPathKeys(jsonPath: string): PropertyKey[] {
  const keys: PropertyKey[] = [];
  for (const m of jsonPath.matchAll(/\.([A-Za-z_$][\w$]*)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]/g)) {
    if (m[1] !== undefined) keys.push(m[1]);
    else if (m[2] !== undefined) keys.push(Number(m[2]));
    else if (m[3] !== undefined) keys.push(m[3]);
  }
  return keys;
}

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

/**
 * Reads and checks a plan file; every refusal happens here, before any request.
 * `expectedBaseUrl` is the configured service (--base-url / FLOWRULES_BASE_URL).
 */
export async function loadPlanFile(file: string, expectedBaseUrl: string): Promise<LoadedPlan> {
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
    const why = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ");
    throw new UserError(`${file} is not valid JSON (${why.length > 160 ? `${why.slice(0, 160)}…` : why}); write plans with \`flowrules plan --out\``);
  }
  return checkPlan(raw, file, expectedBaseUrl);
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
function parseInPlace(raw: Record<string, unknown>, file: string): PlanFile {
  const changes = raw.changes;
  if (Array.isArray(changes)) {
    for (let i = 0; i < changes.length; i++) {
      const one = ChangeSchema.safeParse(changes[i]);
      if (!one.success) refuseShape(file, one.error, ["changes", i]);
      changes[i] = one.data;
    }
  }
  const parsed = (Array.isArray(changes) ? PlanWithParsedChanges : PlanFileSchema).safeParse(raw);
  if (!parsed.success) refuseShape(file, parsed.error);
  return parsed.data;
}

/** The checks of loadPlanFile on already parsed JSON. */
export function checkPlan(raw: unknown, file: string, expectedBaseUrl: string): LoadedPlan {
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
  const plan = parseInPlace(raw as Record<string, unknown>, file);
  if (actual !== plan.digest) {
    throw new UserError(`${file} does not match its digest (${plan.digest}): it was edited after it was planned; refusing to apply it — plan again`);
  }
  if (plan.errors.length > 0) {
    const first = plan.errors[0];
    throw new UserError(
      `${file} records ${plan.errors.length} planning error${plan.errors.length === 1 ? "" : "s"} (first: ${first?.message ?? "?"}); ` +
        `a plan that failed is not applied — fix the rules and plan again`,
    );
  }
  if (!sameBaseUrl(plan.base_url, expectedBaseUrl)) {
    throw new UserError(
      `${file} was planned against ${plan.base_url}, but the configured service is ${expectedBaseUrl} (--base-url / FLOWRULES_BASE_URL); refusing to apply it elsewhere`,
    );
  }
  return { plan, digest: plan.digest, file };
}
