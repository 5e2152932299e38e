/**
 * What the live run of a partial plan answered that a state file does not keep (./held.ts, docs/operating.md "A
 * partial plan"): the workflows, and selections that were answered empty in full.
 */
import {
  DelegatingClient,
  type ApiClient,
  type InstanceListItem,
  type InstanceListQuery,
  type Page,
  type Workflow,
} from "../api/index.js";
import { canonicalQuery } from "./bounds.js";

/** What the live run answered that a state file does not keep: the workflows, and selections that were empty. */
export class HeldMemo extends DelegatingClient {
  workflows: Workflow[] | undefined;
  readonly empty = new Set<string>();

  constructor(inner: ApiClient) {
    super(inner);
  }

  override async listWorkflows(): Promise<Workflow[]> {
    const all = await this.inner.listWorkflows();
    this.workflows = all;
    return all;
  }

  override async *instancePages(
    processId: number,
    query: InstanceListQuery = {},
  ): AsyncGenerator<Page<InstanceListItem>> {
    let pages = 0;
    let empty = true;
    for await (const page of this.inner.instancePages(processId, query)) {
      pages++;
      if (page.results.length > 0 || page.next !== null) empty = false;
      yield page;
    }
    // a selection answered empty in full (the state may answer one without writing it)
    if (pages === 1 && empty) this.empty.add(listingKey(processId, query));
  }

  override async *instances(processId: number, query?: InstanceListQuery): AsyncGenerator<InstanceListItem> {
    for await (const page of this.instancePages(processId, query)) yield* page.results;
  }
}

export function listingKey(processId: number, query: InstanceListQuery): string {
  return `${processId}:${JSON.stringify(canonicalQuery(query))}`;
}
