/**
 * A group of rules (./stream-groups.ts) evaluated while their listed selection is listed, page by page: each page's
 * elements go to every rule whose selection holds them (the listed one, or one filtered from it client-side), so
 * no selection is ever held whole and a first sync's memory does not grow with the tenant (docs/performance.md,
 * "Memory"). The outcome is the one of listing every selection whole and evaluating each rule after
 * (./evaluate-rule.ts): the same requests, the same plan (test/engine/stream.test.ts).
 *
 * Field values are asked 500 ids at a time as the ids come, exactly the form-field pages the whole listings would
 * have asked for (./plan-fields.ts, which orders a workflow's ids by this same listing): only what is still unknown,
 * per field the ids of every rule reading it, in listing order. Instances wait (at most 500 per field) until their
 * values are in; what the plan shows of them is put back in listing order. Each rule's instances are evaluated 500
 * at a time, as a whole listing's are; an instance's field values (those no later rule reads) and record (when no
 * later rule reads records) are dropped once every rule of the group has evaluated it.
 */
import type { InstanceListItem } from "../api/index.js";
import { fieldKey } from "../model/field-values.js";
import type { FieldRef } from "../rules/types.js";
import { plural } from "../text/plural.js";
import { addOutcome, type RuleResult } from "./assemble.js";
import {
  CHUNK,
  evaluateChunk,
  explainRecordReads,
  ruleExclusion,
  type ChunkRun,
  type EvaluateContext,
} from "./evaluate-rule.js";
import { fetchFieldChunk, readRecordsForValues } from "./hydrate.js";
import type { PlannedRule } from "./plan-targets.js";
import { PAGE } from "./query-plan.js";
import { passesFilters } from "./run-queries.js";
import type { StreamGroup } from "./stream-groups.js";
import { KeptOutcomes } from "./stream-kept.js";
import type { FieldsDecision, FieldsLeft } from "./plan-fields.js";

/** What a rule's result was before a stream, to go back to when the listing fails (nothing of it is then planned). */
function resultBefore(result: RuleResult): () => void {
  const { selected, matched, skipped, excluded } = result;
  const skipReasons = new Map(result.skipReasons);
  const errors = result.errors.length;
  const startedTimes = new Map(result.startedTimes);
  return () => {
    Object.assign(result, { selected, matched, skipped, skipReasons, startedTimes });
    if (excluded === undefined) delete result.excluded;
    else result.excluded = excluded;
    result.errors.length = errors;
  };
}

interface Member {
  p: PlannedRule;
  selection: string;
  keys: string[];
  restore: () => void;
  run: ChunkRun;
  /** each instance's place in the rule's selection, until it is evaluated */
  seq: Map<number, number>;
  n: number;
  /** outcomes that show in the plan, evaluated out of listing order: put in in order at the end (compactly) */
  kept: KeptOutcomes;
  inOrder: boolean;
  ready: InstanceListItem[];
  done: number;
  /** records not read before this rule reads them (its explanation) */
  unread: number;
  dead: boolean;
}

interface FieldBuffer {
  ref: FieldRef;
  key: string;
  /** the rules that read it, in the run's order */
  rules: string[];
  /** ids not yet asked for */
  ids: number[];
  /** ids asked for in all */
  unknown: number;
}

export interface GroupDrops {
  /** field keys whose values no rule after the group reads */
  values: readonly string[];
  /** no rule after the group reads records */
  records: boolean;
}

export async function streamGroup(
  ctx: EvaluateContext,
  g: StreamGroup,
  drops: GroupDrops,
  share?: (left: FieldsLeft) => Promise<FieldsDecision>,
): Promise<void> {
  const { client, almanac, runner, plan } = ctx;
  const members: Member[] = [];
  for (const p of g.rules) {
    const q = plan.rules.get(p.key);
    if (!q || ctx.failed(p.rule.name)) continue;
    const keys = p.needs.record ? [] : p.needs.fields.map((f) => fieldKey(f.step, f.action));
    const m: Member = {
      p,
      selection: q.selection,
      keys,
      restore: resultBefore(p.result),
      run: { exclusion: ruleExclusion(ctx, p), probes: [], add: () => undefined, drop: [] },
      seq: new Map(),
      n: 0,
      kept: new KeptOutcomes(),
      inOrder: keys.length === 0,
      ready: [],
      done: 0,
      unread: 0,
      dead: false,
    };
    m.run.add = (o) => {
      const at = m.seq.get(o.instance_id) ?? 0;
      m.seq.delete(o.instance_id);
      if (m.inOrder || (o.error === undefined && !o.matched)) addOutcome(p.result, o);
      else m.kept.add(at, o);
    };
    members.push(m);
  }
  if (members.length === 0) return;
  const processId = members[0]?.p.needs.processId ?? 0;
  const buffers = new Map<string, FieldBuffer>();
  for (const m of members)
    for (const ref of m.p.needs.record ? [] : m.p.needs.fields) {
      const key = fieldKey(ref.step, ref.action);
      const b = buffers.get(key) ?? { ref, key, rules: [], ids: [], unknown: 0 };
      b.rules.push(m.p.key);
      buffers.set(key, b);
    }
  const waiting = new Map<number, { item: InstanceListItem; members: Member[]; missing: number }>();
  // how many rules of the group have yet to evaluate an instance: its values and record go when none has
  const pending = new Map<number, number>();
  let total = 0;
  let sentAny = false;

  const finish = (id: number): void => {
    const left = (pending.get(id) ?? 1) - 1;
    if (left > 0) {
      pending.set(id, left);
      return;
    }
    pending.delete(id);
    for (const key of drops.values) almanac.values.get(key)?.delete(id);
    if (drops.records) {
      almanac.records.delete(id);
      almanac.timed.delete(id);
    }
  };
  const kill = (m: Member, err: unknown, restore: boolean): void => {
    if (m.dead) return;
    m.dead = true;
    if (restore) m.restore();
    ctx.fail(m.p.rule, m.p.result, err);
    for (const i of m.ready.splice(0)) finish(i.id);
    m.seq.clear();
    m.kept.clear();
  };
  const hand = (item: InstanceListItem, to: readonly Member[]): void => {
    for (const m of to) {
      if (m.dead) finish(item.id);
      else m.ready.push(item);
    }
  };
  const evaluate = async (all: boolean): Promise<void> => {
    for (const m of members) {
      while (!m.dead && (m.ready.length >= CHUNK || (all && m.ready.length > 0))) {
        const chunk = m.ready.splice(0, CHUNK);
        try {
          await evaluateChunk(ctx, m.p, chunk, m.run);
        } catch (err) {
          // a record read that fails keeps what was evaluated before it, as a rule evaluated after its listing does
          for (const i of chunk) finish(i.id);
          kill(m, err, !m.inOrder);
          break;
        }
        // an excluded instance has no outcome: its place is forgotten here
        for (const i of chunk) {
          m.seq.delete(i.id);
          finish(i.id);
        }
        m.done += chunk.length;
        ctx.onProgress?.({ rule: m.p.rule.name, done: m.done, total: Math.max(m.done, total) });
      }
    }
  };
  const arrived = (ids: readonly number[]): void => {
    for (const id of ids) {
      const w = waiting.get(id);
      if (!w || --w.missing > 0) continue;
      waiting.delete(id);
      hand(w.item, w.members);
    }
  };
  const send = async (b: FieldBuffer, ids: number[]): Promise<void> => {
    sentAny = true;
    try {
      await fetchFieldChunk(client, almanac, processId, b.ref, ids);
    } catch (err) {
      // a field that cannot be read fails the rules that read it (none of their plan), not the others
      for (const m of members) if (m.keys.includes(b.key)) kill(m, err, true);
    }
    arrived(ids);
  };

  const due = (): boolean =>
    [...buffers.values()].some((b) => b.ids.length >= PAGE) || members.some((m) => !m.dead && m.ready.length >= CHUNK);
  const flush = async (): Promise<void> => {
    for (const b of buffers.values()) while (b.ids.length >= PAGE) await send(b, b.ids.splice(0, PAGE));
    await evaluate(false);
  };
  try {
    for await (const page of runner.pages(g.root)) {
      total = page.count;
      const held = await membership(ctx, g, page.items, (s, err) => {
        for (const m of members) if (under(g, m.selection, s)) kill(m, err, true);
      });
      for (const [at, item] of page.items.entries()) {
        const to = members.filter((m) => !m.dead && held.get(m.selection)?.[at] === true);
        if (to.length === 0) continue;
        pending.set(item.id, to.length);
        // a record is read by the first rule of the run that reads it: the others find it kept
        let claimed = false;
        for (const m of to) {
          m.seq.set(item.id, m.n++);
          if (m.p.needs.record && !claimed && !almanac.records.has(item.id)) {
            m.unread += 1;
            claimed = m.p.needs.cacheRecords;
          }
        }
        let missing = 0;
        const asked = new Set<string>();
        for (const m of to)
          for (const key of m.keys) {
            if (asked.has(key)) continue;
            asked.add(key);
            if (almanac.values.get(key)?.has(item.id) === true) continue;
            const b = buffers.get(key);
            if (!b) continue;
            b.ids.push(item.id);
            b.unknown += 1;
            missing += 1;
          }
        const now = to.filter((m) => m.keys.length === 0);
        const later = to.filter((m) => m.keys.length > 0);
        hand(item, now);
        if (missing === 0) hand(item, later);
        else if (later.length > 0) waiting.set(item.id, { item, members: later, missing });
        // within the page, not after it: a page may be a whole listing (a state replays a sliced one as one page)
        if (due()) await flush();
      }
      await flush();
    }
  } catch (err) {
    // the listing failed: none of the group's rules is planned, as when it failed before any evaluation
    for (const m of members) kill(m, err, true);
    return;
  }
  const left = [...buffers.values()];
  const decision = await share?.({
    sentAny,
    ids: [...waiting.keys()],
    pages: left.reduce((k, b) => k + Math.ceil(b.unknown / PAGE), 0),
    rules: [...new Set(left.filter((b) => b.unknown > 0).flatMap((b) => b.rules))],
  });
  const failed = (err: unknown): void => {
    for (const m of members) if (m.keys.length > 0) kill(m, err, true);
  };
  if (decision?.by === "error") failed(decision.error);
  if (decision?.by === "records" || decision?.by === "error") for (const b of left) b.ids = [];
  else await lastValues(ctx, processId, left, waiting, sentAny || decision?.by === "pages", send, failed);
  for (const w of waiting.values()) hand(w.item, w.members);
  waiting.clear();
  await evaluate(true);
  for (const m of members) {
    if (m.dead) continue;
    if (m.p.needs.record) explainRecordReads(ctx, m.p, m.unread, m.n);
    m.kept.drain((o) => addOutcome(m.p.result, o));
  }
}

/** Whether selection `id` is `s` or filtered from it, at any depth. */
function under(g: StreamGroup, id: string, s: string): boolean {
  const byId = new Map(g.selections.map((x) => [x.id, x]));
  for (let at = byId.get(id); at; at = at.source.kind === "filter" ? byId.get(at.source.parent) : undefined)
    if (at.id === s) return true;
  return false;
}

/**
 * Which of a page's elements each selection of the group holds: the listed one all, a filtered one those of its
 * parent that pass its filters. A filter by record keys reads the records of its parent's elements first, as the
 * whole listing does (./run-queries.ts, `keepRecords`): each read once, and kept. A read that fails fails the rules
 * over the filtered selection (and those filtered from it), as the whole listing's failure does.
 */
async function membership(
  ctx: EvaluateContext,
  g: StreamGroup,
  items: readonly InstanceListItem[],
  failed: (selection: string, err: unknown) => void,
): Promise<Map<string, boolean[]>> {
  const held = new Map<string, boolean[]>();
  const kept = new Set<string>();
  for (const s of g.selections) {
    const src = s.source;
    if (src.kind === "list") {
      held.set(
        s.id,
        items.map(() => s.id === g.root),
      );
      continue;
    }
    const parent = held.get(src.parent) ?? items.map(() => false);
    if (src.records && !kept.has(src.parent)) {
      kept.add(src.parent);
      try {
        await ctx.runner.keepRecordsOf(
          s.processId,
          items.filter((_, at) => parent[at] === true).map((i) => i.id),
        );
      } catch (err) {
        for (const c of g.selections)
          if (c.source.kind === "filter" && c.source.parent === src.parent && c.source.records) failed(c.id, err);
        held.set(
          s.id,
          items.map(() => false),
        );
        continue;
      }
    }
    held.set(
      s.id,
      items.map(
        (item, at) => parent[at] === true && passesFilters(item, src.filters, ctx.almanac.records.get(item.id)),
      ),
    );
  }
  return held;
}

/**
 * The values still unknown once the selection is listed: one read per instance when that is fewer requests than
 * the field pages (decided on the totals, as ./plan-fields.ts does, when no page was asked yet; once a field had
 * 500 unknown ids the pages are always fewer), else the last page of each field.
 */
async function lastValues(
  ctx: EvaluateContext,
  processId: number,
  buffers: FieldBuffer[],
  waiting: Map<number, { item: InstanceListItem; members: Member[] }>,
  sentAny: boolean,
  send: (b: FieldBuffer, ids: number[]) => Promise<void>,
  failed: (err: unknown) => void,
): Promise<void> {
  const { client, almanac, explain } = ctx;
  const pages = buffers.reduce((k, b) => k + Math.ceil(b.unknown / PAGE), 0);
  const ids = [...waiting.keys()];
  if (!sentAny && ids.length > 0 && ids.length < pages) {
    const rules = [...new Set(buffers.filter((b) => b.unknown > 0).flatMap((b) => b.rules))];
    explain({
      subject: "field values",
      workflow_id: processId,
      choice: "record reads",
      requests: ids.length,
      why: `${ids.length} record reads bring every field: fewer than ${pages} form-field pages`,
      rules,
    });
    const knownKeys = [...waiting.values()][0]?.members[0]?.p.needs.knownKeys ?? [];
    try {
      await readRecordsForValues(client, almanac, ids, knownKeys);
    } catch (err) {
      failed(err);
    }
    // the records bring every field (a record that could not be read is asked again when its instance is hydrated)
    for (const b of buffers) b.ids = [];
    return;
  }
  for (const b of buffers) {
    if (b.unknown === 0) continue;
    explain({
      subject: `field ${b.ref.step}/${b.ref.action}`,
      workflow_id: processId,
      choice: "field pages",
      requests: Math.ceil(b.unknown / PAGE),
      why: `${plural(b.unknown, "instance")} not yet known, asked once for all rules, ${PAGE} a page`,
      rules: b.rules,
    });
  }
  await Promise.all(buffers.filter((b) => b.ids.length > 0).map((b) => send(b, b.ids.splice(0))));
}
