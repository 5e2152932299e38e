/**
 * The plan file's one reader, used by `apply` and `show`: the JSON plan format (docs/design.md, "The JSON plan")
 * checked against its zod schema, plus the checks that must all pass before a single request is sent — format
 * version, shape (named by JSON path), digest (tampering), plan errors, and base URL. Each refusal is a UserError
 * with one clear line. The writer is write.ts.
 */
import type { Stats } from "node:fs";
import { open, stat } from "node:fs/promises";
import type { z } from "zod";
import { describeIssue } from "../api/schemas.js";
import { shortInstant } from "../text/instant.js";
import { sameService } from "../model/service.js";
import { UserError } from "../model/errors.js";
import { CanonicalHasher, canonicalKeyOrder, canonicalText } from "./digest.js";
import { JsonScanError, scan } from "./stream-read.js";
import { ChangeSchema, ReportSchema, SignedPlanSchema, SUPPORTED_FORMAT_VERSION } from "./schema.js";
import type { PlannedChange, PlanFile } from "./types.js";
import { errorMessage } from "../model/guards.js";
import { plural } from "../text/plural.js";
import { ENV } from "../model/env-names.js";

/** A plan file larger than this is not a plan we wrote (about 1 kB a change: far beyond any max_instances). */
const MAX_PLAN_BYTES = 512 * 1024 * 1024;

/**
 * Checks one change beyond its shape (src/actions: the kind is known and its request says exactly what kind,
 * instance and step say). Passed in by apply, which knows the action kinds; this package does not.
 */
export type ChangeCheck = (change: PlannedChange, issue: (path: PropertyKey[], message: string) => void) => void;

/** The advice at the end of a refusal of a file that is no plan; a watcher reading its own cycle's plan drops it. */
export const PLAN_OUT_HINT = "; write plans with `flowrules plan --out`";

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
  /** read size; tests use a few bytes to cross every boundary */
  chunkBytes?: number;
}

/** Top-level keys whose arrays are read element by element. */
const STREAMED = new Set(["changes", "reports"]);

/** Shared empty objects: a compact change keeps what apply sends and checks, not what the plan shows. */
const NOTHING: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

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
  const path =
    prefix.length > 0
      ? `$${prefix.map((k) => (typeof k === "number" ? `[${k}]` : `.${String(k)}`)).join("")}${jsonPath.slice(1)}`
      : jsonPath;
  throw new UserError(`${file} is not a valid plan at ${path}: ${problem}`);
}

/** The stream reader's own words for a mistake (./stream-read.ts): they quote nothing of the file. */
const OWN_WORDS =
  /^(not an object|expected a key|expected a colon|expected an array|expected , or \}|expected , or \]|text after the object|Unexpected end of JSON input|a key that is not a valid JSON string)( at byte \d+)?$/;

function notJson(file: string, why: string): never {
  // JSON.parse quotes the text around the mistake: a file that is not a plan (`apply /proc/self/environ`) would have
  // its bytes shown. Only where the mistake is, in the reader's own words
  const at = /position (\d+)/.exec(why)?.[1];
  const said = OWN_WORDS.test(why)
    ? why
    : /Unexpected end of JSON input/.test(why)
      ? "Unexpected end of JSON input"
      : at !== undefined
        ? `a syntax error at byte ${at}`
        : "a syntax error";
  throw new UserError(`${file} is not valid JSON (${said})${PLAN_OUT_HINT}`);
}

function parseJson(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    if (err instanceof RangeError) throw err;
    return notJson(file, errorMessage(err));
  }
}

function checkVersion(file: string, version: unknown): void {
  if (version !== SUPPORTED_FORMAT_VERSION) {
    throw new UserError(
      `${file} has ${version === undefined ? "no format_version" : `format_version ${clipJson(version)}`}; this flowrules applies format_version ${SUPPORTED_FORMAT_VERSION} only — plan again with this version`,
    );
  }
}

/**
 * Reads and checks a plan file; every refusal happens here, before any request, in one line naming the file.
 * `expectedBaseUrl` is the configured service (--base-url or its variable).
 *
 * The file is read once, as a stream (stream-read.ts), never whole: each change is parsed, checked and hashed on its
 * own and kept (compact, for apply) as it passes. The digest is sha256 over the canonical JSON (keys sorted): the
 * changes are hashed as they are read when every top-level key that sorts before `changes` (in a file flowrules
 * wrote: `base_url`) came before them; the reports, which sort after keys written after them, are kept as canonical
 * text until the end. A file with its keys in another order costs one more read of its changes, for the hash only.
 */
export async function loadPlanFile(
  file: string,
  expectedBaseUrl: string,
  check?: ChangeCheck,
  opts: LoadOptions = {},
): Promise<LoadedPlan> {
  const toShow = opts.toShow === true;
  const compact = opts.compact === true;
  const chunkBytes = opts.chunkBytes ?? 256 * 1024;
  await checkReadable(file);
  const changeSchema = check
    ? ChangeSchema.superRefine((c, ctx) =>
        check(c, (path, message) => void ctx.addIssue({ code: "custom", path, message })),
      )
    : ChangeSchema;

  const header: Record<string, unknown> = {};
  const present: string[] = [];
  const offsets = new Map<string, number>();
  const changes: PlannedChange[] = [];
  const reports: PlanFile["reports"] = [];
  const reportTexts: string[] = [];
  const seen = new Map<string, number>();
  const intern = new Map<string, string>();
  const same = (s: string): string => {
    const known = intern.get(s);
    if (known !== undefined) return known;
    intern.set(s, s);
    return s;
  };
  const hasher = new CanonicalHasher();
  /** the keys hashed before `changes` when its array began; undefined until then */
  let hashedBefore: string[] | undefined;
  let current = "";

  try {
    await scan(
      file,
      (key) => {
        current = key;
        present.push(key);
        if (!STREAMED.has(key)) return "whole";
        if (key === "changes") {
          hashedBefore = canonicalKeyOrder(present.filter((k) => k < "changes" && k !== "digest"));
          openChanges(hasher, hashedBefore, header);
        }
        return "elements";
      },
      (key, text) => {
        const value = parseJson(file, text);
        // the version first, as the file names it first: a later format is refused as such, not for its shape
        if (key === "format_version") checkVersion(file, value);
        header[key] = value;
      },
      (key, text, i) => {
        const raw = parseJson(file, text);
        if (key === "reports") {
          reportTexts.push(canonicalText(raw));
          const r = ReportSchema.safeParse(raw);
          if (!r.success) refuseShape(file, r.error, ["reports", i]);
          if (!compact) reports.push(r.data);
          return;
        }
        hasher.element(i, raw);
        const one = changeSchema.safeParse(raw);
        if (!one.success) refuseShape(file, one.error, ["changes", i]);
        const c = one.data;
        const first = seen.get(c.id);
        if (first !== undefined)
          throw new UserError(
            `${file} is not a valid plan at $.changes[${i}].id: duplicate change id (also $.changes[${first}].id)`,
          );
        seen.set(c.id, i);
        changes.push(
          compact
            ? { ...c, rule: same(c.rule), kind: same(c.kind), instance_name: "", before: NOTHING, after: NOTHING }
            : c,
        );
      },
      chunkBytes,
      { onValueStart: (k, offset) => void offsets.set(k, offset) },
    );
  } catch (err) {
    if (err instanceof JsonScanError) {
      if (err.message === "not an object") throw new UserError(`${file} is not a plan: expected a JSON object`);
      // both quote no more of the file than a bounded, escaped key (./stream-read.ts)
      if (err.message.endsWith("appears twice")) throw new UserError(`${file} is not a valid plan: ${err.message}`);
      if (err.message.startsWith("a key longer than"))
        throw new UserError(`${file} is not a valid plan: ${err.message} at byte ${err.offset}`);
      if (err.message === "expected an array")
        throw new UserError(`${file} is not a valid plan at $.${current}: expected an array`);
      notJson(file, `${err.message} at byte ${err.offset}`);
    }
    // canonical JSON recurses: a file nested thousands deep is no plan flowrules wrote
    if (err instanceof RangeError) throw new UserError(`${file} is nested too deeply to be a plan${PLAN_OUT_HINT}`);
    throw err;
  }
  seen.clear();
  intern.clear();

  checkVersion(file, header.format_version);
  const signed = SignedPlanSchema.safeParse({
    ...header,
    ...(present.includes("changes") ? { changes: [] } : {}),
    ...(present.includes("reports") ? { reports: [] } : {}),
  });
  if (!signed.success) refuseShape(file, signed.error);

  const keys = canonicalKeyOrder(present.filter((k) => k !== "digest"));
  const before = keys.filter((k) => k < "changes");
  if (hashedBefore === undefined || before.join("\u0000") !== hashedBefore.join("\u0000")) {
    // a key that sorts before `changes` came after them: hash the changes again, in canonical order (no checks)
    hasher.reset();
    openChanges(hasher, before, header);
    await scan(
      file,
      () => "elements",
      () => undefined,
      (_key, text, i) => hasher.element(i, JSON.parse(text)),
      chunkBytes,
      { array: { key: "changes", offset: offsets.get("changes") ?? 0 } },
    );
  }
  hasher.text("]");
  keys.slice(before.length + 1).forEach((k, n) => {
    hasher.key(before.length + 1 + n, k);
    if (k !== "reports") return hasher.value(header[k]);
    hasher.text("[");
    reportTexts.forEach((t, i) => hasher.elementText(i, t));
    hasher.text("]");
  });
  hasher.text("}");
  const digest = hasher.digest();
  // the summary's counts in the file's order (the schema names reports and errors first): shown again as JSON, the
  // plan is the very bytes of the file
  const counts = signed.data.summary;
  const summary = Object.fromEntries(Object.keys(header.summary as object).map((k) => [k, counts[k]])) as typeof counts;
  const plan: PlanFile = { ...signed.data, summary, changes, reports };

  if (digest !== plan.digest) {
    throw new UserError(
      `${file} does not match its digest (${plan.digest}): it was edited after it was planned; refusing to ${toShow ? "show" : "apply"} it — plan again`,
    );
  }
  // a forecast shows a moment that has not come (docs/forecast.md): its changes are what time would bring, not what to send
  if (!toShow && plan.forecast_at !== undefined) {
    throw new UserError(
      `${file}: a forecast cannot be applied; plan again at or after ${shortInstant(plan.forecast_at)}`,
    );
  }
  // a partial plan covers only what was read before --max-duration ran out (docs/operating.md, "A partial plan")
  if (!toShow && plan.partial !== undefined) {
    throw new UserError(
      `${file}: a partial plan (made with --partial before the sync was complete) cannot be applied; it is for review and reports — plan again once the sync is complete`,
    );
  }
  if (!toShow && plan.errors.length > 0) {
    const first = plan.errors[0];
    throw new UserError(
      `${file} records ${plural(plan.errors.length, "planning error")} (first: ${first?.message ?? "?"}); ` +
        `a plan that failed is not applied — fix the rules and plan again`,
    );
  }
  if (!toShow && !sameService(plan.base_url, expectedBaseUrl)) {
    throw new UserError(
      `${file} was planned against ${plan.base_url}, but the configured service is ${expectedBaseUrl} (--base-url / ${ENV.baseUrl}); refusing to apply it elsewhere`,
    );
  }
  return { plan, digest, file };
}

/** The canonical form up to the first change: `{`, the keys that sort before `changes` with their values, `"changes":[`. */
function openChanges(hasher: CanonicalHasher, before: readonly string[], header: Record<string, unknown>): void {
  hasher.text("{");
  before.forEach((k, n) => {
    hasher.key(n, k);
    hasher.value(header[k]);
  });
  hasher.key(before.length, "changes");
  hasher.text("[");
}

/** One line for a plan file that cannot be read at all (missing, a folder, too large to be a plan). */
async function checkReadable(file: string): Promise<void> {
  let s: Stats;
  try {
    s = await stat(file);
  } catch (err) {
    const code =
      typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : "";
    throw new UserError(
      code === "ENOENT" ? `no plan file ${file}` : `cannot read the plan file ${file}: ${errorMessage(err)}`,
    );
  }
  if (!s.isFile()) throw new UserError(`cannot read the plan file ${file}: not a file`);
  if (s.size > MAX_PLAN_BYTES)
    throw new UserError(`${file} is too large to be a plan (${s.size} bytes)${PLAN_OUT_HINT}`);
}
