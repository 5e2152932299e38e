/**
 * `flowrules config [--check]`: the settings in effect and where each came from (resolved in src/cli, handed over as
 * a ConfigReport), and with --check one cheap request (the workflow list, GET /processes/) that says in one line
 * whether the URL and the key work. The key's value never appears: a refusal names its source, a connection failure
 * the URL's host (docs/operating.md, "Which settings am I using?").
 */
import { ApiError, clientFrom, TransportError } from "../api/index.js";
import type { CommandIO } from "../log/command-io.js";
import { EXIT_ERROR, EXIT_OK } from "../model/errors.js";
import { errorMessage } from "../model/guards.js";
import type { ConnectionSettings } from "../model/settings.js";
import { CONFIG_FORMATS, type ConfigReport } from "../render/config/index.js";
import type { ConfigFormat } from "../render/format-names.js";
import { redactor } from "../log/redact.js";

export interface ConfigCommandOptions {
  report: ConfigReport;
  format: ConfigFormat;
  /** with --check: the connection to try, or why there is none (no URL, no key) */
  check?: { connection: ConnectionSettings; keyFrom: string } | { cannot: string };
}

/** One request, one line: does the service at this URL answer, and does it take this key? */
export async function checkConnection(connection: ConnectionSettings, keyFrom: string): Promise<{ ok: boolean; message: string }> {
  const url = new URL(connection.baseUrl);
  // one attempt and one quick retry: a check answers in seconds, it does not wait out an outage
  const client = clientFrom({ ...connection, rateLimitPerMin: 0 }, { maxAttempts: 2, retryBaseMs: 250, maxRetryTimeMs: 5_000 });
  try {
    const workflows = await client.listWorkflows();
    const n = workflows.length;
    return { ok: true, message: `${connection.baseUrl} answers and accepts the API key from ${keyFrom}: ${n} workflow${n === 1 ? "" : "s"} visible` };
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
      return { ok: false, message: `${url.host} refused the API key from ${keyFrom}: ${err.status} ${err.status === 401 ? "Unauthorized" : "Forbidden"}; check that variable's value` };
    }
    if (err instanceof ApiError && err.status === 404) {
      return { ok: false, message: `${url.host} answered 404 for the workflow list at ${connection.baseUrl}/processes/: is the base URL right (usually it ends in /api)?` };
    }
    if (err instanceof TransportError) return { ok: false, message: `cannot reach ${url.host}: ${err.reason}; is the service running and the base URL right?` };
    return { ok: false, message: `${url.host}: ${errorMessage(err)}` };
  } finally {
    await client.close();
  }
}

export async function configCommand(opts: ConfigCommandOptions, io: CommandIO): Promise<number> {
  let report = opts.report;
  if (opts.check) {
    const check = "cannot" in opts.check ? { ok: false, message: `cannot check: ${opts.check.cannot}` } : await checkConnection(opts.check.connection, opts.check.keyFrom);
    // the last line of defence, as everywhere: no key in what is printed, even if the service echoed it
    const clean = "connection" in opts.check ? redactor([opts.check.connection.apiKey])(check.message) : check.message;
    report = { ...report, check: { ok: check.ok, message: clean } };
    io.log?.event("config.checked", { ok: check.ok });
  }
  io.stdout(CONFIG_FORMATS[opts.format](report));
  const refused = report.settings.some((s) => s.problem !== undefined);
  return refused || report.check?.ok === false ? EXIT_ERROR : EXIT_OK;
}
