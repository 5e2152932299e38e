/**
 * A call as the client sends it (./caller.ts), and what it reads out of an answer: whether it is JSON, what a refusal
 * says, the value by the call's schema, and the service's clock from its Date header.
 */
import type { z } from "zod";
import { ResponseShapeError } from "./errors.js";
import type { ServiceClock } from "./client-types.js";
import type { HttpResponse } from "./http.js";
import { describeIssue } from "./schemas.js";
import type { EndpointName } from "./stats.js";
import { errorMessage } from "../model/guards.js";

export interface CallSpec<T> {
  endpoint: EndpointName;
  method: "GET" | "POST";
  /** relative to the base URL, with query */
  path: string;
  body?: unknown;
  schema: z.ZodType<T>;
  /** what the body should be, for shape errors: "the instance record" */
  what: string;
  /** what is asked, in words, for messages ("listing instances of workflow 1042, page 3"); default from the path */
  asked?: string;
}

/** The words of a call for its errors, when it set them (else the error derives them from the path). */
export function asked(spec: CallSpec<unknown>): { asked?: string } {
  return spec.asked === undefined ? {} : { asked: spec.asked };
}

/**
 * One call to the service, whatever the endpoint: the rate limiter's and the concurrency limit's slots, the exchange,
 * the retry policy's decision (./retry-policy.ts) carried out, the answer parsed by the endpoint's schema, and the
 * errors in words with the key masked. The endpoints are ./client.ts.
 */

/** A body flowrules reads as JSON: declared JSON (`application/json`, `…+json`), or not declared at all. */
export function isJsonContentType(ct: string | undefined): boolean {
  return ct === undefined || /[/+]json\b/i.test(ct);
}

/** The service's `detail`, else a short excerpt of the body (tags stripped, whitespace collapsed). */
export function errorDetail(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && "detail" in parsed) {
      const d = (parsed as { detail: unknown }).detail;
      return typeof d === "string" ? d : JSON.stringify(d).slice(0, 300);
    }
    return JSON.stringify(parsed).slice(0, 300);
  } catch {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
    const plain = (title ?? text.replace(/<[^>]*>/g, " ")).replace(/\s+/g, " ").trim();
    return plain.length > 200 ? `${plain.slice(0, 200)}…` : plain;
  }
}

/** A 2xx answer as the call's schema reads it, or a ResponseShapeError in words (`clean` masks the key out of them). */
export function parseAnswer<T>(spec: CallSpec<T>, res: HttpResponse, clean: (text: string) => string): T {
  const shapeError = (problem: string, jsonPath?: string): ResponseShapeError =>
    new ResponseShapeError({
      ...asked(spec),
      method: spec.method,
      path: spec.path,
      status: res.status,
      what: spec.what,
      problem: clean(problem),
      ...(jsonPath === undefined ? {} : { jsonPath }),
    });
  const ct = res.headers["content-type"];
  if (!isJsonContentType(ct)) {
    throw shapeError(`response is not JSON (content-type ${ct ?? "none"}): ${errorDetail(res.text)}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(res.text);
  } catch (err) {
    throw shapeError(`response is not valid JSON (${errorMessage(err)})`);
  }
  // the text is not needed past here: a page of 500 (a large object once any name is not ASCII) must not live on
  // through the validation below, long enough to be promoted to the old generation
  res.text = "";
  const parsed = spec.schema.safeParse(data);
  if (!parsed.success) {
    const { jsonPath, problem } = describeIssue(parsed.error);
    throw shapeError(problem, jsonPath);
  }
  return parsed.data;
}

/** A 2xx answer's Date header, kept for the client's serviceClock(). */
export function noteDate(clock: ServiceClock, header: string | undefined, ms: number): void {
  clock.answered += 1;
  const at = header === undefined ? Number.NaN : Date.parse(header);
  if (Number.isNaN(at)) {
    clock.undated += 1;
    return;
  }
  const from = at - ms;
  if (clock.earliestMs === null || from < clock.earliestMs) clock.earliestMs = from;
  if (clock.latestMs === null || at > clock.latestMs) clock.latestMs = at;
}
