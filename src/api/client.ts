/**
 * The API client: the only way flowrules talks to the Workflow Instance Service. One method per endpoint of
 * docs/service.md, typed by the zod schemas; pagination as async generators; a shared rate limiter and concurrency limit;
 * retries that never repeat a POST that may have reached the server (./caller.ts, ./retry-policy.ts).
 */
import { ApiError, UnsafeLinkError, WrongRecordError } from "./errors.js";
import { Caller } from "./caller.js";
import type { ApiClient, ClientOptions, FormFieldQuery, InstanceListQuery } from "./client-types.js";
import { cursorPages, DEFAULT_LISTING_LIMITS, numberedPages, type ListingLimits, type Page } from "./pagination.js";
import { pathId, withQuery } from "./query.js";
import {
  BulkAbortResponseSchema,
  FormFieldPageSchema,
  InstanceListPageSchema,
  InstanceRecordSchema,
  WorkflowListSchema,
  type CompleteStepBody,
  type FormFieldValue,
  type InstanceListItem,
  type InstanceRecord,
  type Workflow,
} from "./schemas.js";
import { linkPath, relativeLink } from "./url-guard.js";
import { plural } from "../text/plural.js";

export type {
  ApiClient,
  ClientEvent,
  ClientOptions,
  FormFieldQuery,
  InstanceListQuery,
  ServiceClock,
} from "./client-types.js";
export type { Page } from "./pagination.js";
export type { EndpointName, EndpointStats, RequestStats } from "./stats.js";

/** Largest page the service serves (docs/service.md, "Limits"); also our default, since requests are the unit of cost. */
export const MAX_PAGE_SIZE = 500;

function clampPageSize(value: unknown, name: string): number {
  if (value === undefined || value === null) return MAX_PAGE_SIZE;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new TypeError(`${name} must be a positive integer, got ${String(value)}`);
  return Math.min(n, MAX_PAGE_SIZE);
}

class Client extends Caller implements ApiClient {
  private readonly listingLimits: ListingLimits;

  constructor(opts: ClientOptions) {
    super(opts);
    this.listingLimits = { ...DEFAULT_LISTING_LIMITS, ...opts.listingLimits };
  }

  listWorkflows(): Promise<Workflow[]> {
    return this.call({
      endpoint: "listWorkflows",
      method: "GET",
      path: "/processes/",
      schema: WorkflowListSchema,
      what: "the workflow list",
    });
  }

  instancePages(processId: number, query: InstanceListQuery = {}): AsyncGenerator<Page<InstanceListItem>> {
    const first = withQuery(`/v2/processes/${pathId("processId", processId)}/instances/`, {
      ...query,
      page_size: clampPageSize(query.page_size, "page_size"),
    });
    const words = (n: number): string => `listing instances of workflow ${processId}, page ${n}`;
    return cursorPages(
      first,
      (path, n) =>
        this.call({
          endpoint: "instancePages",
          method: "GET",
          path,
          schema: InstanceListPageSchema,
          what: "an instance list page",
          asked: words(n),
        }),
      (next, from, n) => {
        const rel = relativeLink(this.base, next, from);
        if (rel === null) {
          throw new UnsafeLinkError({
            method: "GET",
            path: from,
            link: linkPath(next),
            basePath: this.base.basePath,
            asked: words(n),
          });
        }
        return rel;
      },
      words,
      this.listingLimits,
    );
  }

  async *instances(processId: number, query?: InstanceListQuery): AsyncGenerator<InstanceListItem> {
    for await (const page of this.instancePages(processId, query)) yield* page.results;
  }

  getInstance(id: number, opts: { injectValues?: boolean; stepsTimeFrame?: boolean } = {}): Promise<InstanceRecord> {
    const path = withQuery(`/instances/${pathId("id", id)}/`, {
      inject_values: opts.injectValues ? "true" : undefined,
      steps_time_frame: opts.stepsTimeFrame ? "true" : undefined,
    });
    return this.call({
      endpoint: "getInstance",
      method: "GET",
      path,
      schema: InstanceRecordSchema,
      what: "the instance record",
    }).then((record) => {
      if (record.id !== id) throw new WrongRecordError(id, record.id);
      return record;
    });
  }

  completeStep(id: number, body: CompleteStepBody): Promise<InstanceRecord> {
    return this.call({
      endpoint: "completeStep",
      method: "POST",
      path: `/instances/${pathId("id", id)}/complete_step/`,
      body,
      schema: InstanceRecordSchema,
      what: "the instance record",
      asked: `${body.mode === "save" ? "saving" : "completing"} step ${body.step_id} of instance ${id}`,
    });
  }

  async bulkAbort(ids: number[]): Promise<{ ids: number[] }> {
    for (const id of ids) pathId("ids[]", id);
    if (ids.length === 0) return { ids: [] };
    return this.call({
      endpoint: "bulkAbort",
      method: "POST",
      path: "/instances/bulk/abort",
      body: { ids },
      schema: BulkAbortResponseSchema,
      what: "the bulk abort response",
      asked: `aborting ${plural(ids.length, "instance")}`,
    });
  }

  formFieldPages(
    processId: number,
    stepId: number,
    actionId: number,
    query: FormFieldQuery = {},
  ): AsyncGenerator<Page<FormFieldValue>> {
    const path = `/processes/${pathId("processId", processId)}/steps/${pathId("stepId", stepId)}/actions/${pathId("actionId", actionId)}/`;
    const limit = clampPageSize(query.limit, "limit");
    const words = (n: number): string =>
      `listing values of field ${actionId} (step ${stepId}, workflow ${processId}), page ${n}`;
    const fetchPage = async (page: number): Promise<Page<FormFieldValue> | "invalid-page"> => {
      try {
        return await this.call({
          endpoint: "formFieldPages",
          method: "GET",
          path: withQuery(path, { ...query, page, limit }),
          schema: FormFieldPageSchema,
          what: "a form-field page",
          asked: words(page),
        });
      } catch (err) {
        // only the service's own JSON "Invalid page." may mean "past the end" (numberedPages checks the count);
        // any other 404 — a gateway's HTML page — is an error
        if (page > 1 && err instanceof ApiError && err.status === 404 && err.detail === "Invalid page.")
          return "invalid-page";
        throw err;
      }
    };
    return numberedPages(fetchPage, this.concurrency, path, words, this.listingLimits);
  }
}

/** Creates a client. Throws InsecureUrlError (plain http:// to a non-loopback host) before any request. */
export function createClient(opts: ClientOptions): ApiClient {
  return new Client(opts);
}
