/** A tiny node:http server on 127.0.0.1:0 for the cases the sandbox cannot produce (slow, HTML, broken bodies). */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach } from "vitest";
import { createClient, type ApiClient, type ClientEvent, type ClientOptions } from "../../src/api/index.js";

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface LocalServer {
  /** http://127.0.0.1:PORT/api */
  baseUrl: string;
  origin: string;
  port: number;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string, n: number) => void | Promise<void>;

export async function startLocalServer(handler: Handler): Promise<LocalServer> {
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      void handler(req, res, body, requests.length);
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  return {
    baseUrl: `${origin}/api`,
    origin,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A port on 127.0.0.1 where nothing listens (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = await startLocalServer(() => undefined);
  await s.close();
  return s.port;
}

/**
 * Local servers and clients a test file starts, each closed after its test: call once at the top of a test file
 * (it registers the afterEach). `defaults` are the client options of the file; a test adds its own per client.
 */
export function localHarness(defaults: Omit<ClientOptions, "baseUrl" | "onEvent">): {
  server: (handler: Parameters<typeof startLocalServer>[0]) => Promise<LocalServer>;
  client: (baseUrl: string, extra?: Partial<ClientOptions>) => { c: ApiClient; events: ClientEvent[] };
} {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });
  return {
    async server(handler) {
      const s = await startLocalServer(handler);
      cleanups.push(() => s.close());
      return s;
    },
    client(baseUrl, extra = {}) {
      const events: ClientEvent[] = [];
      const c = createClient({ baseUrl, ...defaults, onEvent: (e) => events.push(e), ...extra });
      cleanups.push(() => c.close());
      return { c, events };
    },
  };
}
