/**
 * A forecast's field values (./forecast-client.ts): asked once for the whole horizon. Each form-field request a plan
 * makes for some instances also carries, up to a page, the instances a time-relative selection of the workflow may
 * hold at a later point, so the later points find the values known and ask nothing.
 */
import type { ApiClient } from "../api/client.js";
import type { Page } from "../api/pagination.js";
import type { FormFieldValue } from "../api/schemas.js";
import { fieldKey } from "../model/field-values.js";
import { rememberValue, type Almanac } from "./almanac.js";
import { FIELD_CHUNK as FIELD_PAGE } from "./hydrate.js";

export class FieldValues {
  /** per field (`workflow:step:action`), the value records by instance (null: no value) */
  private readonly byField = new Map<string, Map<number, FormFieldValue | null>>();

  constructor(
    private readonly inner: ApiClient,
    /** the plans' facts: told which instances asked for beyond a plan's question hold no value */
    private readonly almanac: Almanac | undefined,
    /** the instances of a workflow a time-relative selection holds at some point but not at all */
    private readonly mayEnter: (processId: number) => Promise<number[]>,
  ) {}

  /**
   * A field's values in some instances: those not known yet are asked together with the instances any
   * time-relative selection of the workflow may hold later (up to a page), so the points that follow ask nothing.
   */
  async *pages(
    processId: number,
    stepId: number,
    actionId: number,
    ids: number[],
  ): AsyncGenerator<Page<FormFieldValue>> {
    const key = `${processId}:${stepId}:${actionId}`;
    let known = this.byField.get(key);
    if (!known) {
      known = new Map();
      this.byField.set(key, known);
    }
    const values = known;
    const missing = [...new Set(ids.filter((id) => !values.has(id)))];
    const extra: number[] = [];
    if (missing.length > 0) {
      const asking = new Set(missing);
      for (const id of await this.mayEnter(processId)) {
        if (asking.size >= FIELD_PAGE) break;
        if (values.has(id) || asking.has(id)) continue;
        asking.add(id);
        extra.push(id);
      }
      const found = new Map<number, FormFieldValue>();
      const q = { instance_ids: [...asking], limit: FIELD_PAGE };
      for await (const page of this.inner.formFieldPages(processId, stepId, actionId, q))
        for (const r of page.results) found.set(r.instance_id, r);
      for (const id of asking) values.set(id, found.get(id) ?? null);
      // the plans learn that these hold no value here from the almanac (those with one, from the page below)
      if (this.almanac)
        for (const id of extra) if (!found.has(id)) rememberValue(this.almanac, fieldKey(stepId, actionId), id, null);
    }
    const results = [...new Set([...ids, ...extra])].flatMap((id) => {
      const v = values.get(id);
      return v ? [v] : [];
    });
    yield { count: results.length, next: null, previous: null, results };
  }
}
