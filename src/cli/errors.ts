/** Turns any thrown value into one line for the user. Stack traces only with FLOWRULES_DEBUG=1. */
export function formatError(err: unknown): string {
  if (err instanceof Error) {
    const debug = process.env.FLOWRULES_DEBUG === "1" && err.stack ? `\n${err.stack}` : "";
    return `${err.message}${debug}`;
  }
  return String(err);
}
