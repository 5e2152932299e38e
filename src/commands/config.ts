/**
 * `flowrules config [--check]`: the settings in effect and where each came from (resolved in src/cli, handed over as
 * a ConfigReport), and with --check one cheap request (the workflow list, GET /processes/) that says in one line
 * whether the URL and the key work, and whether the key sees a workflow the rules name (a key that sees none of them
 * would plan nothing but errors). The key's value never appears: a refusal names its source, a connection failure
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
import { loadRules } from "../rules/index.js";

/** The workflows the rules name, as they name them (an id, or a name). */
export type NamedWorkflow = { id: number } | { name: string };

export interface ConfigCommandOptions {
  report: ConfigReport;
  format: ConfigFormat;
  /** with --check: the connection to try, or why there is none (no URL, no key) */
  check?: { connection: ConnectionSettings; keyFrom: string } | { cannot: string };
  /** with --check: the rule paths whose workflows the key should see (those that load; none: not compared) */
  rulePaths?: string[];
}

/** The workflows the rules at `paths` name; empty when there are none or they do not load (validate says why). */
export async function workflowsNamed(paths: string[]): Promise<NamedWorkflow[]> {
  const loaded = await loadRules(paths).catch(() => undefined);
  const seen = new Map<string, NamedWorkflow>();
  for (const r of loaded?.ruleSet?.rules ?? []) seen.set(JSON.stringify(r.workflow), r.workflow);
  return [...seen.values()];
}

function namedText(w: NamedWorkflow): string {
  return "id" in w ? String(w.id) : JSON.stringify(w.name);
}

/** One request, one line: does the service at this URL answer, and does it take this key? */
export async function checkConnection(
  connection: ConnectionSettings,
  keyFrom: string,
  named: readonly NamedWorkflow[] = [],
): Promise<{ ok: boolean; message: string }> {
  const url = new URL(connection.baseUrl);
  // one attempt and one quick retry: a check answers in seconds, it does not wait out an outage
  const client = clientFrom(
    { ...connection, rateLimitPerMin: 0 },
    { maxAttempts: 2, retryBaseMs: 250, maxRetryTimeMs: 5_000 },
  );
  try {
    const workflows = await client.listWorkflows();
    const n = workflows.length;
    const visible = named.filter((w) => workflows.some((x) => ("id" in w ? x.id === w.id : x.name === w.name)));
    if (named.length > 0 && visible.length === 0) {
      const list =
        named.slice(0, 10).map(namedText).join(", ") + (named.length > 10 ? `, … and ${named.length - 10} more` : "");
      return {
        ok: false,
        message: `${url.host} accepts the API key from ${keyFrom}, but it sees none of the workflows the rules name (${list}; ${n} workflow${n === 1 ? "" : "s"} visible): every rule would fail; check the key's permissions or the base URL`,
      };
    }
    if (n === 0)
      return {
        ok: false,
        message: `${url.host} accepts the API key from ${keyFrom}, but it sees no workflow: a plan would find nothing; check the key's permissions or the base URL`,
      };
    return {
      ok: true,
      message: `${connection.baseUrl} answers and accepts the API key from ${keyFrom}: ${n} workflow${n === 1 ? "" : "s"} visible`,
    };
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
      return {
        ok: false,
        message: `${url.host} refused the API key from ${keyFrom}: ${err.status} ${err.status === 401 ? "Unauthorized" : "Forbidden"}; check that variable's value`,
      };
    }
    if (err instanceof ApiError && err.status === 404) {
      return {
        ok: false,
        message: `${url.host} answered 404 for the workflow list at ${connection.baseUrl}/processes/: is the base URL right (usually it ends in /api)?`,
      };
    }
    if (err instanceof TransportError)
      return {
        ok: false,
        message: `cannot reach ${url.host}: ${err.reason}; is the service running and the base URL right?`,
      };
    return { ok: false, message: `${url.host}: ${errorMessage(err)}` };
  } finally {
    await client.close();
  }
}

export async function configCommand(opts: ConfigCommandOptions, io: CommandIO): Promise<number> {
  let report = opts.report;
  if (opts.check) {
    const check =
      "cannot" in opts.check
        ? { ok: false, message: `cannot check: ${opts.check.cannot}` }
        : await checkConnection(
            opts.check.connection,
            opts.check.keyFrom,
            opts.rulePaths ? await workflowsNamed(opts.rulePaths) : [],
          );
    // the last line of defence, as everywhere: no key in what is printed, even if the service echoed it
    const clean = "connection" in opts.check ? redactor([opts.check.connection.apiKey])(check.message) : check.message;
    report = { ...report, check: { ok: check.ok, message: clean } };
    io.log?.event("config.checked", { ok: check.ok });
  }
  io.stdout(CONFIG_FORMATS[opts.format](report));
  const refused = report.settings.some((s) => s.problem !== undefined);
  return refused || report.check?.ok === false ? EXIT_ERROR : EXIT_OK;
}
