/**
 * A hostile service for tests: a node:http server on 127.0.0.1 that forwards to the sandbox and, when a scripted rule
 * says so, does not forward, or answers with something else (wrong types, HTML, garbage, a huge body), or cuts the
 * answer short. The sandbox behind it keeps real state and its request log shows what actually reached the service.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Exchange {
  method: string;
  /** path under the base URL, without the query: `/instances/5/complete_step/` */
  path: string;
  query: string;
  body: string;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

export interface Hostility {
  /** send the request on to the sandbox (default true) */
  forward?: boolean;
  /** answer this instead (after forwarding, if forwarded) */
  answer?: Answer | ((upstream: Answer) => Answer);
  /** send the headers and half the body, then close the connection */
  truncate?: boolean;
  /** close the connection without an answer */
  destroy?: boolean;
  /** stream this many bytes of body (after a 200 JSON header) */
  hugeBytes?: number;
}

export interface HostileProxy {
  baseUrl: string;
  /** every exchange the proxy received */
  seen: Exchange[];
  /** the rule applied to each exchange; `() => ({})` passes everything through */
  setRule(rule: (ex: Exchange) => Hostility): void;
  close(): Promise<void>;
}

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

async function forwardTo(
  origin: string,
  req: IncomingMessage,
  body: string,
  keys: Record<string, string>,
): Promise<Answer> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === "string" && !["host", "connection", "content-length", "keep-alive"].includes(k)) headers[k] = v;
  }
  // a key of the test's own stands for a demo key of the sandbox
  const key = /^Api-Key (.+)$/.exec(headers.authorization ?? "")?.[1];
  if (key !== undefined && keys[key] !== undefined) headers.authorization = `Api-Key ${keys[key]}`;
  const res = await fetch(`${origin}${req.url ?? "/"}`, {
    method: req.method ?? "GET",
    headers,
    ...(body ? { body } : {}),
  });
  const out: Record<string, string> = {};
  for (const k of ["content-type", "retry-after", "date"]) {
    const v = res.headers.get(k);
    if (v !== null) out[k] = v;
  }
  return { status: res.status, headers: out, body: await res.text() };
}

function send(res: ServerResponse, a: Answer): void {
  res.writeHead(a.status, { ...a.headers, "content-length": String(Buffer.byteLength(a.body)) });
  res.end(a.body);
}

export async function startHostileProxy(
  sandboxOrigin: string,
  opts: { keys?: Record<string, string> } = {},
): Promise<HostileProxy> {
  const seen: Exchange[] = [];
  let rule: (ex: Exchange) => Hostility = () => ({});
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const body = await readAll(req);
      const ex: Exchange = {
        method: req.method ?? "GET",
        path: url.pathname.replace(/^\/api/, ""),
        query: url.search,
        body,
      };
      seen.push(ex);
      const h = rule(ex);
      const upstream: Answer =
        h.forward === false
          ? { status: 200, headers: { "content-type": "application/json" }, body: "{}" }
          : await forwardTo(sandboxOrigin, req, body, opts.keys ?? {});
      if (h.destroy) {
        req.socket.destroy();
        return;
      }
      if (h.hugeBytes !== undefined) {
        res.writeHead(200, { "content-type": "application/json" });
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        let sent = 0;
        const pump = (): void => {
          while (sent < (h.hugeBytes ?? 0) && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          res.end();
        };
        res.on("close", () => (sent = Number.POSITIVE_INFINITY));
        pump();
        return;
      }
      const answer = typeof h.answer === "function" ? h.answer(upstream) : (h.answer ?? upstream);
      if (h.truncate) {
        res.writeHead(answer.status, { ...answer.headers, "content-length": String(Buffer.byteLength(answer.body)) });
        res.write(answer.body.slice(0, Math.floor(answer.body.length / 2)));
        setTimeout(() => req.socket.destroy(), 5);
        return;
      }
      send(res, answer);
    })().catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/api`,
    seen,
    setRule: (r) => void (rule = r),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
