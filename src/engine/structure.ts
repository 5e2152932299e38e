/**
 * Reads workflows' structure live: the process_snapshot of each workflow's newest instance (one list request for
 * that instance, one read of it), cached for the run, so a run costs at most two requests per workflow whatever the
 * number of rules. A workflow without any instance has no readable structure: that is said, never guessed.
 */
import type { ApiClient, Workflow } from "../api/index.js";
import { structureFromSnapshot, type WorkflowStructure } from "../model/structure.js";

export type StructureRead = { structure: WorkflowStructure } | { unavailable: string };

export interface StructureReader {
  /** `known` names the workflow when the caller already listed it (describe, pull): its name and folder */
  read(workflowId: number, known?: Workflow): Promise<StructureRead>;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function structureReader(client: ApiClient): StructureReader {
  const cache = new Map<number, Promise<StructureRead>>();
  const readOnce = async (id: number, known?: Workflow): Promise<StructureRead> => {
    try {
      let newest: { id: number } | undefined;
      for await (const page of client.instancePages(id, { ordering: "-started_time", page_size: 1 })) {
        newest = page.results[0];
        break; // one page of one: the newest instance
      }
      const workflow = {
        id,
        name: known?.name ?? `workflow ${id}`,
        folder: known?.folder ? { id: known.folder.id, name: known.folder.name ?? "" } : null,
      };
      if (!newest) {
        return {
          unavailable: `workflow ${id}${known ? ` "${known.name}"` : ""} has no instance yet, so its steps and fields cannot be read`,
        };
      }
      const record = await client.getInstance(newest.id, { injectValues: true });
      const snap = record.process_snapshot;
      if (!known && typeof snap?.name === "string" && snap.name !== "") workflow.name = snap.name;
      return {
        structure: structureFromSnapshot(
          workflow,
          { instance_id: record.id, started_time: record.started_time ?? "" },
          snap,
        ),
      };
    } catch (err) {
      return { unavailable: `the structure of workflow ${id} could not be read: ${message(err)}` };
    }
  };
  return {
    read(id, known) {
      let p = cache.get(id);
      if (!p) {
        p = readOnce(id, known);
        cache.set(id, p);
      }
      return p;
    },
  };
}
