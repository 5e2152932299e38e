/**
 * Opaque cursors for 4.2: base64url(JSON payload) + "." + base64url(HMAC-SHA256 prefix). The payload is a keyset
 * position (sort key of the boundary item + its id), so pages stay stable while data changes: no item is skipped or
 * repeated because of inserts before the position. The HMAC makes tampering a clean 400 instead of odd results.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { badRequest } from "./errors.js";

const payloadSchema = z.object({
  v: z.literal(1),
  /** workflow id the cursor belongs to */
  p: z.number().int(),
  /** canonical ordering text */
  o: z.string(),
  /** moment total_runtime is measured to, fixed at the first page */
  t: z.number(),
  /** sort key of the boundary item (ordering values, then id) */
  k: z.array(z.union([z.number(), z.string(), z.null()])),
  /** true: the page BEFORE the position (a "previous" link); false: the page after it */
  r: z.boolean(),
});
export type CursorPayload = z.infer<typeof payloadSchema>;

export class CursorCodec {
  private readonly secret: Buffer;

  constructor(seed: number) {
    // Derived from the seed so cursors (and request logs that contain them) are reproducible across runs.
    this.secret = createHmac("sha256", "flowrules-sandbox-cursor").update(String(seed)).digest();
  }

  encode(payload: CursorPayload): string {
    const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
    return `${body}.${this.sign(body)}`;
  }

  /** Decodes and verifies; 400 on anything malformed or tampered with. */
  decode(text: string): CursorPayload {
    const invalid = badRequest("Invalid cursor.");
    const [body, sig, ...rest] = text.split(".");
    if (!body || !sig || rest.length) throw invalid;
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(sig);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid;
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    } catch {
      throw invalid;
    }
    const parsed = payloadSchema.safeParse(json);
    if (!parsed.success) throw invalid;
    return parsed.data;
  }

  private sign(body: string): string {
    return createHmac("sha256", this.secret).update(body).digest().subarray(0, 16).toString("base64url");
  }
}
