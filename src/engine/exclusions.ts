/**
 * Instances a rule never matches: its `exclude.instance_ids` and `exclude.tags`, and the opt-out tag that people set
 * in the product to keep the automation off one instance (README.md, "Operating rules in production").
 *
 * The service cannot exclude, so this happens client-side, but at the lowest request cost: tags are not in the list
 * element, only in the full record. A rule that reads records anyway decides from them (no extra request); any other
 * rule asks the service for the instances of the same selection that carry one of the excluded tags (`tags` is an
 * OR filter): a few list pages per rule instead of one record read per selected instance. The question is asked only
 * once a page of the selection turns out not to be empty.
 */
import type { ApiClient } from "../api/index.js";
import type { CompiledRule } from "../rules/types.js";
import type { ListQuery } from "./select.js";
import { DATE_TIME_PARAMS, parseSignedDuration } from "../rules/datetime.js";

export interface Exclusions {
  ids: ReadonlySet<number>;
  /** the rule's exclude.tags */
  tags: readonly string[];
  /** the opt-out tag across all rules; undefined when turned off */
  optOut?: string;
}

export function exclusionsOf(rule: CompiledRule, optOutTag: string | undefined): Exclusions {
  return {
    ids: new Set(rule.exclude?.instance_ids ?? []),
    tags: rule.exclude?.tags ?? [],
    ...(optOutTag ? { optOut: optOutTag } : {}),
  };
}

/** Every tag that excludes an instance from this rule. */
export function excludedTags(ex: Exclusions): string[] {
  return [...new Set([...(ex.optOut !== undefined ? [ex.optOut] : []), ...ex.tags])];
}

/**
 * Why an instance is excluded, in words, or undefined when it is not. `tags` are the instance's tags when known
 * (from its record); the opt-out tag is named first since it wins over any rule.
 */
export function exclusionReason(ex: Exclusions, id: number, tags: readonly string[] | undefined): string | undefined {
  if (ex.optOut !== undefined && tags?.includes(ex.optOut)) return `it carries the opt-out tag "${ex.optOut}"`;
  if (ex.ids.has(id)) return `its id ${id} is listed in the rule's exclude.instance_ids`;
  const tag = ex.tags.find((t) => tags?.includes(t));
  return tag !== undefined ? `it carries the tag "${tag}" listed in the rule's exclude.tags` : undefined;
}

/**
 * The ids, among the rule's selection, of instances carrying any excluded tag: the same query with `tags` replaced
 * and without the bounds in `moving` (a widened selection only adds ids that are never looked up). Leaving out the
 * bounds that move with the clock makes it the same question at every instant: a forecast asks it once for all its
 * points (docs/forecast.md).
 */
export async function taggedIds(
  client: ApiClient,
  processId: number,
  query: ListQuery,
  tags: readonly string[],
  moving: readonly string[] = [],
): Promise<Set<number>> {
  const ids = new Set<number>();
  if (tags.length === 0) return ids;
  const { tags: _selected, ...rest } = query;
  for (const key of moving) delete rest[key];
  for await (const item of client.instances(processId, { ...rest, tags: [...tags] })) ids.add(item.id);
  return ids;
}

const DATE_TIME = new Set(DATE_TIME_PARAMS);

/** The date bounds of a `select` that move with the clock (`now`, `-P30D`), by parameter name. */
export function movingBounds(select: Readonly<Record<string, unknown>>): string[] {
  return Object.entries(select).flatMap(([k, v]) =>
    DATE_TIME.has(k) && typeof v === "string" && (v === "now" || parseSignedDuration(v) !== undefined) ? [k] : [],
  );
}

/**
 * Decides exclusion for the pages of one rule's selection. `needsRecord`: the rule reads each record, so tags come
 * from there and no listing by tag is needed.
 */
export class ExclusionFilter {
  private tagged?: Set<number>;

  constructor(
    readonly ex: Exclusions,
    private readonly lookup: (() => Promise<Set<number>>) | undefined,
  ) {}

  /** The ids of `ids` to leave out (by id or, when the rule does not read records, by tag). */
  async excluded(ids: readonly number[]): Promise<Set<number>> {
    const out = new Set<number>();
    if (ids.length === 0) return out;
    if (this.lookup && this.tagged === undefined) this.tagged = await this.lookup();
    for (const id of ids) if (this.ex.ids.has(id) || this.tagged?.has(id)) out.add(id);
    return out;
  }

  /** For an instance whose record was read: excluded by one of its tags? */
  excludedByRecord(id: number, tags: readonly string[] | null | undefined): boolean {
    return exclusionReason(this.ex, id, tags ?? []) !== undefined;
  }
}

/**
 * The filter for one rule: by record when its instances' records are read (`readsRecords`), else by one tag listing
 * of its selection.
 */
export function exclusionFilter(
  client: ApiClient,
  rule: CompiledRule,
  processId: number,
  query: ListQuery,
  optOutTag: string | undefined,
  readsRecords: boolean = rule.needs.record,
): ExclusionFilter {
  const ex = exclusionsOf(rule, optOutTag);
  const tags = excludedTags(ex);
  const moving = movingBounds(rule.select);
  const lookup = !readsRecords && tags.length > 0 ? () => taggedIds(client, processId, query, tags, moving) : undefined;
  return new ExclusionFilter(ex, lookup);
}
