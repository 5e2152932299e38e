import type { ApiClient, CompleteStepBody, InstanceRecord } from "../api/index.js";
import { DelegatingClient } from "../api/index.js";

/** What the state does with the answers of our own writes (StateClient.wrote, abortedIds). */
interface StateRunWrites {
  wrote(record: InstanceRecord, sent: CompleteStepBody): void;
  abortedIds(ids: readonly number[]): void;
}

/**
 * The client an apply sends through (`apply --state`, `watch --apply`): every call goes to the service as it is; the
 * answers of our own writes are written through into the state (StateClient.wrote, abortedIds). Reads are not
 * answered from the state: apply judges staleness from what the service says now.
 */
export class WriteThroughClient extends DelegatingClient {
  constructor(
    inner: ApiClient,
    private readonly state: Pick<StateRunWrites, "wrote" | "abortedIds">,
  ) {
    super(inner);
  }

  override async completeStep(id: number, body: CompleteStepBody): Promise<InstanceRecord> {
    const record = await this.inner.completeStep(id, body);
    this.state.wrote(record, body);
    return record;
  }
  override async bulkAbort(ids: number[]): Promise<{ ids: number[] }> {
    const answer = await this.inner.bulkAbort(ids);
    this.state.abortedIds(answer.ids);
    return answer;
  }
}
