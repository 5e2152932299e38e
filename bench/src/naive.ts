/**
 * The naive baseline: the benchmark's work written the way the service's quick-start scripts do it, with plain
 * `fetch` and nothing of ours — pages of 100 (the v2 list with page_size=100, following `next`), one record read per
 * instance, one request per mutation (a complete_step each; a bulk abort carrying a single id each), all sequential.
 *
 * It decides first and mutates afterwards (rather than mutating while it pages) so its two phases line up with
 * flowrules' plan and apply; the request count is the same either way.
 */
import { performance } from "node:perf_hooks";
import {
  API_KEY,
  AMOUNT_ACTION,
  APPROVAL_COMMENT,
  COMMENT_ACTION,
  CURRENCY_ACTION,
  DATE_ACTION,
  STEP_ID,
  WORKFLOW_ID,
  decide,
  plainInput,
} from "./scenario.js";
import { NAIVE_PAGE_SIZE } from "./floor.js";
import { RssSampler, type PhaseHook, type SideResult } from "./side.js";

interface ListPage {
  next: string | null;
  results: Array<{ id: number }>;
}

interface SnapshotAction {
  id: number;
  input_object?: unknown;
}

interface InstanceRecord {
  active_step_ids?: number[];
  process_snapshot?: { steps?: Array<{ id: number; actions?: SnapshotAction[] }> };
}

const headers = { Authorization: `Api-Key ${API_KEY}`, "Content-Type": "application/json" };

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { headers });
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  return (await res.json()) as T;
}

/** POSTs a mutation; a failure is counted, not fatal (a quick-start script logs it and carries on). */
async function post(url: string, body: unknown): Promise<boolean> {
  const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.ok;
}

function fieldValue(record: InstanceRecord, actionId: number): unknown {
  for (const step of record.process_snapshot?.steps ?? []) {
    if (step.id !== STEP_ID) continue;
    return plainInput(step.actions?.find((a) => a.id === actionId)?.input_object);
  }
  return undefined;
}

export async function runNaive(baseUrl: string, onPhase: PhaseHook): Promise<SideResult> {
  const sampler = new RssSampler();
  const phases: SideResult["phases"] = [];
  const completes: number[] = [];
  const aborts: number[] = [];

  // read: every running claim, page by page, then each one's full record
  let t0 = performance.now();
  let url: string | null =
    `${baseUrl}/v2/processes/${WORKFLOW_ID}/instances/?status=running&page_size=${NAIVE_PAGE_SIZE}`;
  while (url !== null) {
    const page: ListPage = await getJson<ListPage>(url);
    for (const item of page.results) {
      const record = await getJson<InstanceRecord>(`${baseUrl}/instances/${item.id}/?inject_values=true`);
      const d = decide(
        fieldValue(record, AMOUNT_ACTION),
        fieldValue(record, CURRENCY_ACTION),
        record.active_step_ids ?? [],
      );
      if (d === "complete") completes.push(item.id);
      else if (d === "abort") aborts.push(item.id);
    }
    url = page.next;
  }
  phases.push({
    phase: "plan",
    wallMs: performance.now() - t0,
    peakRssBytes: sampler.peak(),
    maxRssBytes: sampler.maxRss(),
  });
  await onPhase("plan");

  // mutate: one call each, in order
  t0 = performance.now();
  let failed = 0;
  const now = new Date().toISOString();
  for (const id of completes) {
    const ok = await post(`${baseUrl}/instances/${id}/complete_step/`, {
      step_id: STEP_ID,
      actions: [
        { action_id: COMMENT_ACTION, input_object: { inputValue: APPROVAL_COMMENT } },
        { action_id: DATE_ACTION, input_object: { date: now } },
      ],
      mode: "complete",
    });
    if (!ok) failed += 1;
  }
  for (const id of aborts) if (!(await post(`${baseUrl}/instances/bulk/abort`, { ids: [id] }))) failed += 1;
  phases.push({
    phase: "apply",
    wallMs: performance.now() - t0,
    peakRssBytes: sampler.peak(),
    maxRssBytes: sampler.maxRss(),
  });
  await onPhase("apply");
  sampler.stop();

  return {
    side: "naive",
    phases,
    maxRssBytes: sampler.maxRss(),
    outcome: { completes: completes.length, aborts: aborts.length, failed },
  };
}
