/**
 * `flowrules state show --format json`: the StateReport of src/state/show.ts as it is — dir, file, size_bytes,
 * unusable, newer, format_version, flowrules_version, base_url, written_at, run_at, verifies, same_key, workflows
 * (workflow, bookmark, newest_seen, last_full_read, instances, records, field_values, listings), locks, leftovers.
 */
import type { StateReport } from "../../state/show.js";
import { jsonSafe } from "../escape.js";

export function stateJson(report: StateReport): string {
  return jsonSafe(`${JSON.stringify(report, null, 2)}\n`);
}
