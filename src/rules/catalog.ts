/**
 * The workflow catalog `flowrules.workflows.json`: the structure of every workflow the rules name, written by
 * `flowrules pull` and committed beside the rules, so that validate, test and explain can check steps, fields and
 * values without any request (docs/workflows.md). A catalog that cannot be used is named in a warning and ignored;
 * it never fails a command by itself.
 */
import type { Stats } from "node:fs";
import { stat } from "node:fs/promises";
import { kindOf, readCappedText } from "../fs/capped-read.js";
import { z } from "zod";
import { sameService } from "../model/service.js";
import { WorkflowStructureSchema, type WorkflowStructure } from "../model/structure.js";

export const CATALOG_FORMAT_VERSION = 1;

/** A catalog holds the structure of the workflows the rules name: far less than this; a larger file is not one. */
export const MAX_CATALOG_BYTES = 64 * 1024 * 1024;

export const CatalogSchema = z.object({
  format_version: z.number().int(),
  pulled_at: z.string(),
  base_url: z.string(),
  workflows: z.array(WorkflowStructureSchema),
});
export type Catalog = z.infer<typeof CatalogSchema>;

export interface CatalogRead {
  catalog?: Catalog;
  /** one line each: why the catalog (or part of it) is not used */
  warnings: string[];
}

/**
 * Reads a catalog. `required` (an explicit --workflows FILE) makes a missing file a warning too; `baseUrl`, when the
 * connection is known, must be the one the catalog was pulled from.
 */
export async function readCatalog(file: string, opts: { required?: boolean; baseUrl?: string } = {}): Promise<CatalogRead> {
  // judged with stat before it is opened: reading a FIFO would block the process, a device (/dev/zero) never ends
  let st: Stats;
  try {
    st = await stat(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && !opts.required) return { warnings: [] };
    return { warnings: [`workflow catalog ${file} cannot be read (${code ?? "error"}); it is ignored`] };
  }
  if (!st.isFile()) return { warnings: [`workflow catalog ${file} is ${kindOf(st)}, not a regular file; it is ignored`] };
  const read = readCappedText(file, MAX_CATALOG_BYTES);
  if (!read.ok) return { warnings: [`workflow catalog ${file} cannot be read (${read.problem}); it is ignored`] };
  let json: unknown;
  try {
    json = JSON.parse(read.text);
  } catch {
    // the parser's message quotes the text it read: a path to someone else's file (/proc/self/environ) would echo it
    return { warnings: [`workflow catalog ${file} is not valid JSON; it is ignored — run flowrules pull`] };
  }
  const version = typeof json === "object" && json !== null ? (json as { format_version?: unknown }).format_version : undefined;
  if (version !== undefined && version !== CATALOG_FORMAT_VERSION) {
    return { warnings: [`workflow catalog ${file} has format_version ${JSON.stringify(version)}; this flowrules reads ${CATALOG_FORMAT_VERSION}; it is ignored — run flowrules pull`] };
  }
  const parsed = CatalogSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    // without what was received: the file may be another program's, its values are not ours to echo
    const at = issue ? `${issue.path.join(".") || "(top)"}: ${issue.message.replace(/, received [^]*$/, "")}` : "malformed";
    return { warnings: [`workflow catalog ${file} is malformed at ${at}; it is ignored — run flowrules pull`] };
  }
  if (opts.baseUrl !== undefined && !sameService(parsed.data.base_url, opts.baseUrl)) {
    return {
      warnings: [`workflow catalog ${file} was pulled from ${parsed.data.base_url}, not from ${opts.baseUrl}; it is ignored — run flowrules pull`],
    };
  }
  return { catalog: parsed.data, warnings: [] };
}

export function catalogWorkflow(catalog: Catalog, ref: { id: number } | { name: string }): WorkflowStructure[] {
  if ("id" in ref) return catalog.workflows.filter((w) => w.workflow.id === ref.id);
  const exact = catalog.workflows.filter((w) => w.workflow.name === ref.name);
  return exact.length > 0 ? exact : catalog.workflows.filter((w) => w.workflow.name.toLowerCase() === ref.name.toLowerCase());
}

/** What changed between the committed structure and the live one, one phrase each (steps and fields by id). */
export function structureDrift(was: WorkflowStructure, now: WorkflowStructure): string[] {
  const out: string[] = [];
  const wf = `workflow ${now.workflow.id} "${now.workflow.name}"`;
  const oldSteps = new Map(was.steps.map((s) => [s.id, s]));
  const newSteps = new Map(now.steps.map((s) => [s.id, s]));
  for (const s of now.steps) {
    const o = oldSteps.get(s.id);
    if (!o) {
      out.push(`${wf}: step ${s.id} "${s.name}" added`);
      continue;
    }
    if (o.name !== s.name) out.push(`${wf}: step ${s.id} renamed from "${o.name}" to "${s.name}"`);
    const oldFields = new Map(o.actions.map((a) => [a.id, a]));
    const newFields = new Set(s.actions.map((a) => a.id));
    for (const a of s.actions) {
      const oa = oldFields.get(a.id);
      if (!oa) out.push(`${wf}: field ${a.id} "${a.name}" added to step ${s.id} "${s.name}"`);
      else {
        if (oa.name !== a.name) out.push(`${wf}: field ${a.id} of step ${s.id} renamed from "${oa.name}" to "${a.name}"`);
        if (oa.type !== a.type) out.push(`${wf}: field ${a.id} "${a.name}" changed type from ${oa.type} to ${a.type}`);
      }
    }
    for (const oa of o.actions) if (!newFields.has(oa.id)) out.push(`${wf}: field ${oa.id} "${oa.name}" removed from step ${s.id} "${s.name}"`);
  }
  for (const o of was.steps) if (!newSteps.has(o.id)) out.push(`${wf}: step ${o.id} "${o.name}" removed`);
  return out;
}
