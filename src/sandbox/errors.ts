/** An HTTP error answered as JSON `{"detail": "..."}`; thrown anywhere below a handler, caught by the server. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = "HttpError";
  }
}

export const badRequest = (detail: string): HttpError => new HttpError(400, detail);
export const notFound = (detail = "Not found."): HttpError => new HttpError(404, detail);

/** A domain rule refused a change (step not active, instance not running …): the API answers 400. */
export class StateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StateError";
  }
}
