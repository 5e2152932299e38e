/** 4.2 cursor pagination: complete walks, previous links, clamping, bad cursors, stability under changes. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningSandbox } from "../../src/sandbox/index.js";
import { call, listAll, start, type Answer, type ListPage } from "./helpers.js";

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await start({ instances: 3000 });
});
afterAll(() => sb.close());

const first = (q: string): Promise<Answer<ListPage>> => call<ListPage>(sb, `/v2/processes/1042/instances/?${q}`);

describe("4.2 pagination", () => {
  it("page_size defaults to 100", async () => {
    const res = await first("");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; version=v1");
    expect(res.body.results).toHaveLength(100);
    expect(res.body.previous).toBeNull();
    expect(res.body.count).toBe(sb.store.ids(1042).length);
    expect(Object.keys(res.body.results[0] ?? {}).sort()).toEqual(["id", "name", "public_url", "status"]);
  });

  it("page_size above 500 is clamped to 500; below 1 is a 400", async () => {
    expect((await first("page_size=5000")).body.results).toHaveLength(500);
    expect((await first("page_size=0")).status).toBe(400);
    expect((await first("page_size=-3")).status).toBe(400);
    expect((await first("page_size=ten")).status).toBe(400);
  });

  it("following next visits every instance once, and counts agree on every page", async () => {
    for (const size of [500, 97]) {
      const ids: number[] = [];
      const counts = new Set<number>();
      let url: string | null = `/v2/processes/1042/instances/?page_size=${size}&ordering=-started_time`;
      let pages = 0;
      while (url) {
        const res: Answer<ListPage> = await call<ListPage>(sb, url);
        expect(res.status).toBe(200);
        counts.add(res.body.count);
        ids.push(...res.body.results.map((r) => r.id));
        if (pages > 0) expect(res.body.previous).not.toBeNull();
        url = res.body.next;
        pages++;
      }
      const total = sb.store.ids(1042).length;
      expect(ids).toHaveLength(total);
      expect(new Set(ids).size).toBe(total);
      expect([...counts]).toEqual([total]);
      expect(pages).toBe(Math.ceil(total / size));
    }
  });

  it("next and previous are absolute URLs on the sandbox's origin that keep the other parameters", async () => {
    const res = await first("status=running&ordering=name&page_size=10&tags=expenses");
    const next = new URL(res.body.next ?? "");
    expect(next.origin).toBe(sb.origin);
    expect(next.pathname).toBe("/api/v2/processes/1042/instances/");
    expect(next.searchParams.get("status")).toBe("running");
    expect(next.searchParams.get("ordering")).toBe("name");
    expect(next.searchParams.get("page_size")).toBe("10");
    expect(next.searchParams.get("tags")).toBe("expenses");
    expect(next.searchParams.get("cursor")).toBeTruthy();
  });

  it("previous leads back to exactly the page before", async () => {
    const p1 = await first("page_size=50&ordering=-deadline");
    const p2 = await call<ListPage>(sb, p1.body.next ?? "");
    const p3 = await call<ListPage>(sb, p2.body.next ?? "");
    const back2 = await call<ListPage>(sb, p3.body.previous ?? "");
    expect(back2.body.results.map((r) => r.id)).toEqual(p2.body.results.map((r) => r.id));
    const back1 = await call<ListPage>(sb, back2.body.previous ?? "");
    expect(back1.body.results.map((r) => r.id)).toEqual(p1.body.results.map((r) => r.id));
    expect(back1.body.previous).toBeNull();
    expect(back1.body.next).not.toBeNull();
  });

  it("the last page has no next; an empty result has neither link", async () => {
    const { pages } = await listAll(sb, 1045, "");
    expect(pages[pages.length - 1]?.next).toBeNull();
    const none = await first("name=no-such-name");
    expect(none.body).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it("a tampered, garbage or foreign cursor is a 400", async () => {
    const res = await first("page_size=5");
    const cursor = new URL(res.body.next ?? "").searchParams.get("cursor") ?? "";
    const [body, sig] = cursor.split(".");
    const payload = JSON.parse(Buffer.from(body ?? "", "base64url").toString()) as { k: unknown[] };
    payload.k = [1];
    const forged = `${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${sig}`;
    for (const bad of [forged, "garbage", `${cursor}x`, "a.b.c", ""]) {
      if (!bad) continue;
      const r = await call<{ detail: string }>(
        sb,
        `/v2/processes/1042/instances/?page_size=5&cursor=${encodeURIComponent(bad)}`,
      );
      expect(r.status).toBe(400);
      expect(r.body.detail).toMatch(/cursor/i);
    }
    const otherOrdering = await call<{ detail: string }>(
      sb,
      `/v2/processes/1042/instances/?ordering=name&cursor=${encodeURIComponent(cursor)}`,
    );
    expect(otherOrdering.status).toBe(400);
    const otherWorkflow = await call(sb, `/v2/processes/1043/instances/?cursor=${encodeURIComponent(cursor)}`);
    expect(otherWorkflow.status).toBe(400);
  });

  it("stays stable while instances change between pages (keyset cursor)", async () => {
    const p1 = await first("page_size=100&ordering=name&status=running");
    const seen = new Set(p1.body.results.map((r) => r.id));
    // An outside change moves an instance that was on page 1 to the end, and one later instance is aborted.
    const moved = p1.body.results[0]?.id ?? 0;
    sb.store.update(moved, (i) => {
      i.name = `zzz ${i.name}`;
    });
    const later =
      sb.store.list(1042).filter((i) => i.abortedTime === null && i.completedTime === null && !seen.has(i.id))[5]?.id ??
      0;
    sb.store.abort(later);
    const rest: number[] = [];
    let url: string | null = p1.body.next;
    while (url) {
      const res: Answer<ListPage> = await call<ListPage>(sb, url);
      rest.push(...res.body.results.map((r) => r.id));
      url = res.body.next;
    }
    expect(rest.some((id) => seen.has(id) && id !== moved)).toBe(false);
    expect(rest).not.toContain(later);
    expect(rest[rest.length - 1]).toBe(moved);
    expect(new Set(rest).size).toBe(rest.length);
  });
});
