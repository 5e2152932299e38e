/** Compact fixture instances for the pure planner. */
import type { InstanceData, InstanceStatus } from "../../src/actions/instance.js";
import type { InstanceRecord } from "../../src/api/schemas.js";

export interface Fixture {
  id: number;
  status?: InstanceStatus;
  /** `step:action` → input object */
  values?: Record<string, unknown>;
  record?: Partial<InstanceRecord>;
  process_id?: number;
}

export function instance(f: Fixture): InstanceData {
  return {
    id: f.id,
    name: `Instance ${f.id}`,
    status: f.status ?? "running",
    process_id: f.process_id ?? 1042,
    ...(f.record ? { record: { id: f.id, ...f.record } as InstanceRecord } : {}),
    values: new Map(Object.entries(f.values ?? {})),
  };
}
