/**
 * `halt`, a kind that exists only in test/actions/dummy-kind.test.ts: written the way CONTRIBUTING.md ("Adding an
 * action kind") says, as one module, and registered by that test alone. It stops the matched running instances in
 * batches, through the service's bulk-stop endpoint (the sandbox has no other batch endpoint), and says so in its own
 * words ("halt", "not halted"), so the test can tell every view took them from here.
 */
import { BULK_ABORT_PATH } from "../../src/actions/abort.js";
import { describeStatus, statusOf } from "../../src/actions/instance.js";
import type { MutatingActionKind } from "../../src/actions/types.js";
import type { SourcePos } from "../../src/model/rule-types.js";
import { isRecord } from "../../src/model/guards.js";

const description = "Halt every matched running instance, in batches (a kind of the tests only).";

export interface HaltAction {
  kind: "halt";
  /** why, shown in plans */
  note?: string;
  pos: SourcePos;
}

export const halt: MutatingActionKind<"halt", HaltAction> = {
  kind: "halt",
  mutating: true,
  description,
  schema: {
    type: "object",
    description,
    properties: {
      halt: {
        type: "object",
        description,
        properties: {
          note: { type: "string", minLength: 1, description: "Why the instances are halted, shown in plans." },
        },
        additionalProperties: false,
      },
    },
    required: ["halt"],
    additionalProperties: false,
  },
  bare: false,
  presentation: {
    symbol: "‖",
    legend: "halt the instance",
    summary: (n) => `${n} ${n === 1 ? "instance" : "instances"} to halt`,
    colour: "cyan",
  },

  compile: (body, ctx) => ({
    kind: "halt",
    ...(typeof body.note === "string" ? { note: body.note } : {}),
    pos: ctx.pos,
  }),
  reads: () => [],
  recordKeys: () => [],
  target: () => "instance",
  phrase: () => "halts instances",

  plan({ rule, action, data }) {
    if (data.status !== "running") return Promise.resolve({ skipped: `instance is ${data.status}` });
    return Promise.resolve({
      change: {
        id: `${rule.name}:halt:${data.id}`,
        rule: rule.name,
        instance_id: data.id,
        instance_name: data.name,
        process_id: data.process_id,
        kind: "halt",
        request: { method: "POST", path: BULK_ABORT_PATH, body: { ids: [data.id] } },
        before: { status: "running" },
        after: { status: "aborted", ...(action.note ? { note: action.note } : {}) },
        precondition: {
          status: "running",
          ...(data.record?.last_updated_time ? { last_updated_time: data.record.last_updated_time } : {}),
        },
      },
    });
  },

  describe: () => ({ label: "halt", effect: "halts it" }),
  changeTarget: () => "instance",

  checkChange(c, issue) {
    const body = c.request.body;
    const ids = isRecord(body) ? body.ids : undefined;
    if (c.request.path !== BULK_ABORT_PATH || !Array.isArray(ids) || ids.length !== 1 || ids[0] !== c.instance_id) {
      issue(["request"], `a halt is sent to ${BULK_ABORT_PATH} with {"ids": [${c.instance_id}]}`);
    }
  },

  effect: (_c, record) =>
    record.aborted_time
      ? { applied: true, detail: `halted at ${record.aborted_time}` }
      : { applied: false, detail: `not halted (${statusOf(record)})` },

  send: {
    mode: "batch",
    words: { request: "bulk halt", done: "halted", notDone: "not halted" },
    send: async (client, ids) => (await client.bulkAbort(ids)).ids,
    async tookEffectSince(client, processIds, since) {
      const ids = new Set<number>();
      for (const pid of new Set(processIds)) {
        for await (const item of client.instances(pid, {
          status: ["aborted"],
          aborted_time_after: since.toISOString(),
        })) {
          if (item.status === "aborted") ids.add(item.id);
        }
      }
      return ids;
    },
    whyNot: (r) => `still ${describeStatus(r)}: the service did not halt it`,
  },
};
