/** Shared answers for bodies a handler cannot use. */
import type { DecodedBody } from "../body.js";
import { HttpError, badRequest } from "../errors.js";
import type { z } from "zod";

export function unsupportedMedia(media: string, accepted: string): HttpError {
  return new HttpError(415, `Unsupported media type "${media}": send ${accepted}.`);
}

export function malformed(body: Extract<DecodedBody, { kind: "invalid" }>): HttpError {
  return badRequest(`Malformed ${body.media} body: ${body.error}`);
}

/** "actions.0.action_id: expected number, received string; mode: …" */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(body)"}: ${i.message}`).join("; ");
}
