/** abort: stop every matched running instance; planned per instance, sent in bulk batches at apply. */
import { isRecord } from "../model/guards.js";
import { describeStatus, statusOf } from "./instance.js";
import { plural } from "../text/plural.js";
import type { SourcePos } from "../model/rule-types.js";
import type { MutatingActionKind } from "./types.js";

/** The service's bulk-stop path has no trailing slash (docs/service.md, "Bulk abort"). */
export const BULK_ABORT_PATH = "/instances/bulk/abort";

const description =
  "Stop (abort) every matched running instance. Planned per instance; sent in batches to POST /instances/bulk/abort.";

export interface AbortAction {
  kind: "abort";
  pos: SourcePos;
}

export const abort: MutatingActionKind<"abort", AbortAction> = {
  kind: "abort",
  mutating: true,
  description,
  // written as the bare string `abort`, or as `{ abort: {} }`; two alternatives of the `action` list (no nested
  // anyOf), so editors offer every kind
  schema: {
    anyOf: [
      { const: "abort", description },
      {
        type: "object",
        description,
        properties: { abort: { type: "object", description, properties: {}, additionalProperties: false } },
        required: ["abort"],
        additionalProperties: false,
      },
    ],
  },
  bare: true,
  presentation: {
    symbol: "✗",
    legend: "abort the instance",
    summary: (n) => `${plural(n, "instance")} to abort`,
    colour: "red",
  },

  compile: (_body, ctx) => ({ kind: "abort", pos: ctx.pos }),
  reads: () => [],
  recordKeys: () => [],
  target: () => "instance",
  phrase: () => "aborts instances",

  plan({ rule, data }) {
    if (data.status !== "running") return Promise.resolve({ skipped: `the instance is ${data.status}` });
    return Promise.resolve({
      change: {
        id: `${rule.name}:abort:${data.id}`,
        rule: rule.name,
        instance_id: data.id,
        instance_name: data.name,
        process_id: data.process_id,
        kind: "abort",
        request: { method: "POST", path: BULK_ABORT_PATH, body: { ids: [data.id] } },
        before: { status: "running" },
        after: { status: "aborted" },
        precondition: {
          status: "running",
          ...(data.record?.last_updated_time ? { last_updated_time: data.record.last_updated_time } : {}),
        },
      },
    });
  },

  describe: () => ({ label: "abort", effect: "aborts it" }),
  changeTarget: () => "instance",

  checkChange(c, issue) {
    if (c.request.path !== BULK_ABORT_PATH) issue(["request", "path"], `an abort is sent to ${BULK_ABORT_PATH}`);
    // checked by hand, not with a zod schema built per change: a plan holds up to 100,000 of them
    const body = c.request.body;
    const ids = isRecord(body) && Object.keys(body).length === 1 ? body.ids : undefined;
    if (!Array.isArray(ids) || ids.length !== 1 || ids[0] !== c.instance_id) {
      issue(["request", "body"], `an abort's body must be {"ids": [${c.instance_id}]}`);
    }
  },

  effect: (_c, record) =>
    record.aborted_time
      ? { applied: true, detail: `aborted at ${record.aborted_time}` }
      : { applied: false, detail: `not aborted (${statusOf(record)})` },

  send: {
    mode: "batch",
    words: { request: "bulk abort", done: "aborted", notDone: "not aborted" },
    send: async (client, ids) => (await client.bulkAbort(ids)).ids,
    // one list of recently aborted instances per workflow decides a whole batch
    async tookEffectSince(client, processIds, since) {
      const ids = new Set<number>();
      const query = { status: ["aborted"], aborted_time_after: since.toISOString(), page_size: 500 };
      await Promise.all(
        [...new Set(processIds)].map(async (pid) => {
          // each item's own status decides, never the filter alone: a service or proxy that ignores `status=aborted`
          // would otherwise make running instances count as aborted
          for await (const item of client.instances(pid, query)) if (item.status === "aborted") ids.add(item.id);
        }),
      );
      return ids;
    },
    whyNot(r) {
      if (r.aborted_time) return `already aborted (at ${r.aborted_time})`;
      if (r.completed_time) return `completed (at ${r.completed_time})`;
      return `still ${describeStatus(r)}: the service did not abort it (the API key may not be allowed to abort in this workflow)`;
    },
  },
};
