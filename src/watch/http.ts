/**
 * `flowrules watch --metrics-port N`: the watcher's metrics for Prometheus (`GET /metrics`), its liveness
 * (`GET /healthz`) and readiness (`GET /readyz`) for probes, on 127.0.0.1 unless `--metrics-host` says otherwise
 * (docs/watch.md). What they say is ./metrics.ts's; the body never holds the API key.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from "../render/metrics/prometheus.js";
import type { WatchMetrics } from "./metrics.js";

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

export async function startMetricsServer(metrics: WatchMetrics, host: string, port: number): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res
        .writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" })
        .end("method not allowed\n");
      return;
    }
    if (path === "/metrics") {
      res
        .writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE })
        .end(req.method === "HEAD" ? undefined : renderPrometheus(metrics.families()));
      return;
    }
    if (path === "/healthz" || path === "/readyz") {
      const h = path === "/healthz" ? metrics.health() : metrics.ready();
      res
        .writeHead(h.status, { "content-type": "text/plain; charset=utf-8" })
        .end(req.method === "HEAD" ? undefined : `${h.text}\n`);
      return;
    }
    res
      .writeHead(404, { "content-type": "text/plain; charset=utf-8" })
      .end("not found: GET /metrics, /healthz or /readyz\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
