/**
 * Webhook delivery (src/notify/send.ts) against a receiver on loopback: the document arrives as JSON, a 5xx is
 * retried and a 4xx is not, and what is said about a failure names the receiver without the secret path or query.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { deliver, deliveryWarning, notifyAll } from "../../src/notify/send.js";
import { closeAfterAll } from "../helpers/temp.js";

interface Received {
  path: string;
  contentType: string | undefined;
  body: unknown;
}

let origin: string;
const received: Received[] = [];
/** statuses to answer, per path, in order; 200 once they run out */
const script = new Map<string, number[]>();

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString()));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}

beforeAll(async () => {
  const server: Server = createServer((req, res) => {
    void readBody(req).then((text) => {
      const path = req.url ?? "/";
      received.push({ path, contentType: req.headers["content-type"], body: JSON.parse(text) as unknown });
      const status = script.get(path)?.shift() ?? 200;
      res.writeHead(status, { "content-type": "text/plain" }).end(status === 200 ? "ok" : "no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closeAfterAll({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

const payload = { event: "plan.finished", text: "Plan: 3 steps to complete." };
const fast = { backoffMs: 1, timeoutMs: 5000 };

describe("webhook delivery", () => {
  it("posts the document as JSON, once when the receiver takes it", async () => {
    const d = await deliver(new URL(`${origin}/hooks/T000/secret?token=s3cret`), payload, fast);
    expect(d).toEqual({ target: `${origin}/…`, ok: true, attempts: 1 });
    const got = received.filter((r) => r.path.startsWith("/hooks/T000"));
    expect(got).toEqual([{ path: "/hooks/T000/secret?token=s3cret", contentType: "application/json", body: payload }]);
  });

  it("retries a 5xx and gives up on a 4xx at once; the warning keeps the secret path out", async () => {
    script.set("/flaky", [503, 502]);
    expect(await deliver(new URL(`${origin}/flaky`), payload, fast)).toMatchObject({ ok: true, attempts: 3 });
    script.set("/refused/secret", [400]);
    const refused = await deliver(new URL(`${origin}/refused/secret`), payload, fast);
    expect(refused).toMatchObject({ ok: false, attempts: 1, problem: "answered 400" });
    expect(received.filter((r) => r.path === "/refused/secret")).toHaveLength(1);
    const warning = deliveryWarning(refused);
    expect(warning).toContain(origin);
    expect(warning).not.toContain("secret");
  });

  it("delivers to several receivers, in the order given", async () => {
    script.set("/b", [404]);
    const ds = await notifyAll([new URL(`${origin}/a`), new URL(`${origin}/b`)], payload, fast);
    expect(ds.map((d) => d.ok)).toEqual([true, false]);
  });
});
