/** What describe, init and pull share: the visible workflows, one named on the command line, and its structure. */
import type { ApiClient, Workflow } from "../api/index.js";
import { UserError } from "../model/errors.js";
import type { WorkflowStructure } from "../model/structure.js";
import { structureReader, type StructureReader } from "../engine/structure.js";
import { findWorkflow } from "../engine/workflow-ref.js";

export interface WorkflowSource {
  all: Workflow[];
  reader: StructureReader;
}

export async function workflowSource(client: ApiClient): Promise<WorkflowSource> {
  return { all: await client.listWorkflows(), reader: structureReader(client) };
}

export function pickWorkflow(src: WorkflowSource, ref: string): Workflow {
  const found = findWorkflow(src.all, ref);
  if ("error" in found) throw new UserError(found.error);
  return found.workflow;
}

/** The workflow's structure, or a UserError saying why it cannot be read (no instance yet, an API failure). */
export async function structureOf(src: WorkflowSource, w: Workflow): Promise<WorkflowStructure> {
  const read = await src.reader.read(w.id, w);
  if ("unavailable" in read) throw new UserError(read.unavailable);
  return read.structure;
}
