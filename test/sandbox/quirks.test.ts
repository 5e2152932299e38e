/** Sandbox quirks: each changes the answers as documented; without them the answers stay faithful. */
import { afterAll, describe, expect, it } from "vitest";
import { QUIRK_NAMES, parseQuirks, quirkList, type RunningSandbox } from "../../src/sandbox/index.js";
import { INTERNAL_ORIGIN, SMALL_FIELD_LIMIT, SMALL_PAGE_SIZE } from "../../src/sandbox/quirks.js";
import { call, start } from "./helpers.js";

const sandboxes: RunningSandbox[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
});

async function sandbox(quirks: string[] = []): Promise<RunningSandbox> {
  const sb = await start({ instances: 300, quirks });
  sandboxes.push(sb);
  return sb;
}

interface Page {
  count?: number;
  next: string | null;
  results: Array<Record<string, unknown>>;
}
interface RecordBody {
  last_updated_time: string | null;
  started_time: string;
  process_snapshot: {
    steps: Array<{
      actions: Array<{ id: number; type: string; input_object?: { inputValue?: unknown; date?: string } }>;
    }>;
  };
}

/** An instance of `workflow` whose field `action` holds a value (from the store). */
function withValue(sb: RunningSandbox, action: number): number {
  const inst = sb.store.list().find((i) => i.values.has(action));
  if (!inst) throw new Error(`no instance with a value in ${action}`);
  return inst.id;
}

function actionOf(
  body: RecordBody,
  id: number,
): { type: string; input_object?: { inputValue?: unknown; date?: string } } | undefined {
  return body.process_snapshot.steps.flatMap((s) => s.actions).find((a) => a.id === id);
}

describe("quirks", () => {
  it("has a documented list and refuses unknown names", () => {
    expect(quirkList().map((q) => q.name)).toEqual([...QUIRK_NAMES]);
    for (const q of quirkList()) expect(q.description.length).toBeGreaterThan(10);
    expect(parseQuirks(" decimal-strings, no-count ,")).toEqual(["decimal-strings", "no-count"]);
    expect(() => parseQuirks("decimal-strings,Decimal")).toThrow(/unknown quirk "Decimal"; known: /);
  });

  it("by default the answers are faithful: numbers, Z times, radio objects, counts, 127.0.0.1 links", async () => {
    const sb = await sandbox();
    expect(sb.quirks).toEqual([]);
    const id = withValue(sb, 50222);
    const r = await call<RecordBody>(sb, `/instances/${id}/?inject_values=true`);
    expect(typeof actionOf(r.body, 50222)?.input_object?.inputValue).toBe("number");
    expect(r.body.started_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const list = await call<Page>(sb, "/v2/processes/1042/instances/?page_size=10");
    expect(list.body.count).toBeGreaterThan(10);
    expect(list.body.next?.startsWith(`${sb.origin}/api/`)).toBe(true);
  });

  it("decimal-strings, offset-micros, radio-plain rewrite stored values and times in records and form-field pages", async () => {
    const sb = await sandbox(["decimal-strings", "offset-micros", "radio-plain"]);
    const id = withValue(sb, 50222);
    const r = await call<RecordBody>(sb, `/instances/${id}/?inject_values=true`);
    const amount = sb.store.get(id)?.values.get(50222) as { inputValue: number };
    expect(actionOf(r.body, 50222)?.input_object?.inputValue).toBe(amount.inputValue.toFixed(2));
    expect(r.body.started_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}000\+00:00$/);
    const currency = actionOf(r.body, 50223)?.input_object?.inputValue;
    if (currency !== undefined) expect(typeof currency).toBe("string");
    const page = await call<Page>(sb, "/processes/1042/steps/20111/actions/50223/");
    expect(page.body.results.length).toBeGreaterThan(0);
    for (const v of page.body.results) expect(typeof (v.value as { inputValue: unknown }).inputValue).toBe("string");
    const dates = await call<Page>(sb, "/processes/1042/steps/20111/actions/50231/");
    for (const v of dates.body.results) expect((v.value as { date: string }).date).toMatch(/\d{3}000\+00:00$/);
  });

  it("next-host, https-next, localhost-next rewrite links; small-pages clamps page sizes", async () => {
    for (const [quirk, prefix] of [
      ["next-host", `${INTERNAL_ORIGIN}/api/`],
      ["https-next", "https://127.0.0.1:"],
      ["localhost-next", "http://localhost:"],
    ] as const) {
      const sb = await sandbox([quirk]);
      expect(sb.quirks).toEqual([quirk, "small-pages"]);
      const list = await call<Page>(sb, "/v2/processes/1042/instances/?page_size=500");
      expect(list.body.results).toHaveLength(SMALL_PAGE_SIZE);
      expect(list.body.next?.startsWith(prefix), `${quirk}: ${list.body.next}`).toBe(true);
      const fields = await call<Page>(sb, "/processes/1042/steps/20111/actions/50222/?limit=500");
      expect(fields.body.results).toHaveLength(SMALL_FIELD_LIMIT);
    }
  });

  it("no-count drops count from instance list pages only", async () => {
    const sb = await sandbox(["no-count"]);
    const list = await call<Page>(sb, "/v2/processes/1042/instances/");
    expect("count" in list.body).toBe(false);
    expect(list.body.next).not.toBeNull();
    const fields = await call<Page>(sb, "/processes/1042/steps/20111/actions/50222/");
    expect(fields.body.count).toBeGreaterThan(0);
  });

  it("gateway-404-page2 answers page 2 of a form-field listing with an HTML 404, and logs it", async () => {
    const sb = await sandbox(["gateway-404-page2"]);
    const res = await fetch(`${sb.baseUrl}/processes/1042/steps/20111/actions/50222/?page=2`, {
      headers: { authorization: "Api-Key sandbox-admin" },
    });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await res.text()).toContain("<title>404 Not Found</title>");
    expect((await call<Page>(sb, "/processes/1042/steps/20111/actions/50222/?page=3")).status).toBe(200);
    expect(sb.requests().map((r) => r.status)).toEqual([404, 200]);
  });
});

describe("last_updated_time", () => {
  it("is never null: an instance never changed shows its start time, and filters and ordering agree", async () => {
    const sb = await sandbox();
    const untouched = sb.store.list().filter((i) => i.lastUpdatedTime === null);
    expect(untouched.length).toBeGreaterThan(0);
    for (const inst of untouched.slice(0, 5)) {
      const r = await call<RecordBody>(sb, `/instances/${inst.id}/`);
      expect(r.body.last_updated_time).toBe(r.body.started_time);
    }
    const one = untouched[0];
    if (!one) throw new Error("unreachable");
    const at = new Date(one.startedTime).toISOString();
    const list = await call<Page>(
      sb,
      `/v2/processes/${one.processId}/instances/?last_updated_time_after=${encodeURIComponent(at)}&last_updated_time_before=${encodeURIComponent(at)}`,
    );
    expect(list.body.results.map((i) => i.id)).toContain(one.id);
  });
});
