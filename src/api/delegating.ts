/**
 * A client that passes every call to another: the base of the clients that answer or record some calls themselves
 * (`src/state/client.ts`: the state's client and the write-through one) and leave the rest to the service.
 */
import type { ApiClient, FormFieldQuery, InstanceListQuery, ServiceClock } from "./client.js";
import type { Page } from "./pagination.js";
import type { CompleteStepBody, FormFieldValue, InstanceListItem, InstanceRecord, Workflow } from "./schemas.js";

export class DelegatingClient implements ApiClient {
  readonly baseUrl: string;

  constructor(protected readonly inner: ApiClient) {
    this.baseUrl = inner.baseUrl;
  }

  listWorkflows(): Promise<Workflow[]> {
    return this.inner.listWorkflows();
  }
  instancePages(processId: number, query?: InstanceListQuery): AsyncGenerator<Page<InstanceListItem>> {
    return this.inner.instancePages(processId, query);
  }
  instances(processId: number, query?: InstanceListQuery): AsyncGenerator<InstanceListItem> {
    return this.inner.instances(processId, query);
  }
  getInstance(id: number, opts?: { injectValues?: boolean; stepsTimeFrame?: boolean }): Promise<InstanceRecord> {
    return this.inner.getInstance(id, opts);
  }
  completeStep(id: number, body: CompleteStepBody): Promise<InstanceRecord> {
    return this.inner.completeStep(id, body);
  }
  bulkAbort(ids: number[]): Promise<{ ids: number[] }> {
    return this.inner.bulkAbort(ids);
  }
  formFieldPages(
    processId: number,
    stepId: number,
    actionId: number,
    query?: FormFieldQuery,
  ): AsyncGenerator<Page<FormFieldValue>> {
    return this.inner.formFieldPages(processId, stepId, actionId, query);
  }
  stats(): ReturnType<ApiClient["stats"]> {
    return this.inner.stats();
  }
  unusable(): ReturnType<ApiClient["unusable"]> {
    return this.inner.unusable();
  }
  serviceClock(): ServiceClock | undefined {
    return this.inner.serviceClock?.();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
