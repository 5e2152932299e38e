/** `flowrules workflows --format json`: `[{ id, name, folder }]`, folder `{ id, name }` or null. */
import type { Workflow } from "../../api/index.js";
import { jsonSafe } from "../escape.js";

export function workflowsJson(all: readonly Workflow[]): string {
  const out = all.map((w) => ({
    id: w.id,
    name: w.name,
    folder: w.folder ? { id: w.folder.id, name: w.folder.name ?? "" } : null,
  }));
  return jsonSafe(`${JSON.stringify(out, null, 2)}\n`);
}
