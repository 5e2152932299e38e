/**
 * Request bodies: reading with a size limit, then decoding by media type. JSON, urlencoded and multipart are decoded;
 * anything else is kept as "unsupported" so a handler can answer 415. Decoding never throws.
 */
import type { IncomingMessage } from "node:http";
import { HttpError } from "./errors.js";

/** Bodies above this answer 413. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Beyond this the sandbox stops draining an oversized body and drops the connection. */
const DRAIN_LIMIT = 64 * 1024 * 1024;

export type DecodedBody =
  | { kind: "none" }
  | { kind: "json"; value: unknown }
  | { kind: "form"; media: "urlencoded" | "multipart"; fields: Map<string, string[]> }
  | { kind: "invalid"; media: string; error: string; raw: string }
  | { kind: "unsupported"; media: string; raw: string };

/**
 * Reads the whole body. An oversized body is drained (so the client gets a clean 413 rather than a broken pipe) and
 * then rejected with 413.
 */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        tooLarge = true;
        chunks.length = 0;
        if (size > DRAIN_LIMIT) req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    let ended = false;
    req.on("end", () => {
      ended = true;
      if (tooLarge) reject(tooLargeError());
      else resolve(Buffer.concat(chunks));
    });
    // "aborted" / ECONNRESET: the client went away (or a slow one was cut off) mid-body; not a sandbox bug
    req.on("error", () =>
      reject(tooLarge ? tooLargeError() : new HttpError(400, "Request body incomplete: the connection closed.")),
    );
    // a client that goes away mid-body (or an oversized body we cut off) must not leave the request pending
    req.on("close", () => {
      if (!ended)
        reject(tooLarge ? tooLargeError() : new HttpError(400, "Request body incomplete: the connection closed."));
    });
  });
}

function tooLargeError(): HttpError {
  return new HttpError(413, `Request body too large: the limit is ${MAX_BODY_BYTES} bytes (1 MB).`);
}

export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

export async function decodeBody(raw: Buffer, contentType: string | undefined): Promise<DecodedBody> {
  if (raw.length === 0) return { kind: "none" };
  const media = mediaTypeOf(contentType);
  const text = raw.toString("utf8");
  // No content type: try JSON, the API's own format.
  if (media === "" || media === "application/json" || media.endsWith("+json")) {
    try {
      return { kind: "json", value: JSON.parse(text) as unknown };
    } catch (err) {
      return {
        kind: "invalid",
        media: media || "application/json",
        error: err instanceof Error ? err.message : String(err),
        raw: text,
      };
    }
  }
  if (media === "application/x-www-form-urlencoded") {
    const fields = new Map<string, string[]>();
    for (const [k, v] of new URLSearchParams(text)) fields.set(k, [...(fields.get(k) ?? []), v]);
    return { kind: "form", media: "urlencoded", fields };
  }
  if (media === "multipart/form-data") {
    try {
      // Node 20's fetch Response parses multipart; no dependency needed.
      const form = await new Response(new Uint8Array(raw), {
        headers: { "content-type": contentType ?? "" },
      }).formData();
      const fields = new Map<string, string[]>();
      for (const [k, v] of form) {
        const value = typeof v === "string" ? v : `[file ${v.name}]`;
        fields.set(k, [...(fields.get(k) ?? []), value]);
      }
      return { kind: "form", media: "multipart", fields };
    } catch (err) {
      return { kind: "invalid", media, error: err instanceof Error ? err.message : String(err), raw: text };
    }
  }
  return { kind: "unsupported", media, raw: text };
}

/** The body as the request log shows it. */
export function bodyForLog(body: DecodedBody): unknown {
  switch (body.kind) {
    case "none":
      return null;
    case "json":
      return body.value;
    case "form": {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of body.fields) out[k] = v.length === 1 ? (v[0] as string) : v;
      return out;
    }
    case "invalid":
    case "unsupported":
      return body.raw.length > 65536 ? `${body.raw.slice(0, 65536)}…` : body.raw;
  }
}
