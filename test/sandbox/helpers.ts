/** Shared helpers for the sandbox tests: HTTP calls with a demo key and expectations computed from the store. */
import { startSandbox, type InstanceState, type RunningSandbox, type SandboxOptions } from "../../src/sandbox/index.js";

export const NOW = new Date("2026-06-15T12:00:00.000Z");
export const KEYS = {
  admin: "sandbox-admin",
  lead: "sandbox-lead",
  member: "sandbox-member",
  outsider: "sandbox-outsider",
} as const;
export type KeyName = keyof typeof KEYS;

export function start(opts: SandboxOptions = {}): Promise<RunningSandbox> {
  return startSandbox({ port: 0, instances: 600, seed: 7, now: NOW, ...opts });
}

export interface Answer<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

export interface CallOptions {
  key?: KeyName | null;
  method?: string;
  body?: string | FormData | URLSearchParams;
  headers?: Record<string, string>;
}

/** Calls `${baseUrl}${path}` (or an absolute URL) with a demo key (admin by default) and parses JSON. */
export async function call<T = unknown>(sb: RunningSandbox, path: string, opts: CallOptions = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  const key = opts.key === undefined ? "admin" : opts.key;
  if (key !== null) headers.Authorization = `Api-Key ${KEYS[key]}`;
  const url = path.startsWith("http") ? path : `${sb.baseUrl}${path}`;
  const res = await fetch(url, { method: opts.method ?? "GET", headers, body: opts.body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : null) as T };
}

export function postJson<T = unknown>(
  sb: RunningSandbox,
  path: string,
  body: unknown,
  key: KeyName = "admin",
): Promise<Answer<T>> {
  return call<T>(sb, path, {
    method: "POST",
    key,
    body: JSON.stringify(body),
    headers: { "Content-Type": "application/json" },
  });
}

export interface ListPage {
  count: number;
  next: string | null;
  previous: string | null;
  results: { id: number; name: string; status: string; public_url: string }[];
}

/** Follows `next` from the first page to the end; returns every id in order and the pages seen. */
export async function listAll(
  sb: RunningSandbox,
  processId: number,
  query: string,
  key: KeyName = "admin",
): Promise<{ ids: number[]; pages: ListPage[] }> {
  const pages: ListPage[] = [];
  let url: string | null = `/v2/processes/${processId}/instances/?page_size=500${query ? `&${query}` : ""}`;
  while (url) {
    const res: Answer<ListPage> = await call<ListPage>(sb, url, { key });
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${JSON.stringify(res.body)}`);
    pages.push(res.body);
    url = res.body.next;
  }
  return { ids: pages.flatMap((p) => p.results.map((r) => r.id)), pages };
}

export function statusOf(i: InstanceState): "running" | "completed" | "aborted" {
  return i.abortedTime !== null ? "aborted" : i.completedTime !== null ? "completed" : "running";
}

/** Progress the way the README documents it: completed steps / 3 steps, rounded down; completed instance = 100. */
export function progressOf(i: InstanceState): number {
  return statusOf(i) === "completed" ? 100 : Math.floor((100 * i.stepCompletedTimes.size) / 3);
}

export function endedOf(i: InstanceState): number | null {
  return i.abortedTime ?? i.completedTime;
}

export function runtimeOf(i: InstanceState, now = NOW.getTime()): number {
  return (endedOf(i) ?? now) - i.startedTime;
}

export function idsWhere(sb: RunningSandbox, processId: number, pred: (i: InstanceState) => boolean): number[] {
  return sb.store
    .list(processId)
    .filter(pred)
    .map((i) => i.id);
}

export function sorted(ids: number[]): number[] {
  return [...ids].sort((a, b) => a - b);
}
