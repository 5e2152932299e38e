/**
 * `flowrules pull [paths...]`: writes the workflow catalog (flowrules.workflows.json, or --workflows FILE) with the
 * structure of every workflow the rules name, for validate, test and explain to check against without a request.
 */
import { checkOutputFile, writeFileAtomic } from "../fs/write-file.js";
import { clientFrom } from "../api/index.js";
import type { ConnectionSettings } from "../model/settings.js";
import { EXIT_ERROR, EXIT_OK } from "../model/errors.js";
import type { WorkflowStructure } from "../model/structure.js";
import type { CommandIO } from "../log/command-io.js";
import { clientEventLogger, nullLogger } from "../log/index.js";
import { CATALOG_FORMAT_VERSION, type Catalog } from "../rules/catalog.js";
import { CATALOG_FILE } from "../model/defaults.js";
import { DEFAULT_RULE_PATHS } from "../rules/index.js";
import { loadRuleSetOrReport } from "./load.js";
import { workflowSource } from "./workflow-source.js";
import { findWorkflow } from "../engine/workflow-ref.js";
import { serviceName } from "../model/settings.js";
import { plural } from "../text/plural.js";

export interface PullOptions {
  paths: string[];
  workflows?: string;
  connection: ConnectionSettings;
  now?: Date;
  /** the profile that chose the service, named beside it */
  profile?: string;
}

export async function pullCommand(opts: PullOptions, io: CommandIO): Promise<number> {
  const ruleSet = await loadRuleSetOrReport(opts.paths.length > 0 ? opts.paths : DEFAULT_RULE_PATHS, [], io);
  if (!ruleSet) return EXIT_ERROR;
  const file = opts.workflows ?? CATALOG_FILE;
  // before any request: a folder or a device at the catalog's path is one line, not a system error after the pull
  await checkOutputFile(file);
  const client = clientFrom(opts.connection, { onEvent: clientEventLogger(io.log ?? nullLogger) });
  try {
    const src = await workflowSource(client);
    const ids = new Set<number>();
    let failed = false;
    for (const rule of ruleSet.rules) {
      // "*": every workflow the key sees; a list: each of them
      if (rule.workflows === "*") {
        for (const w of src.all) ids.add(w.id);
        continue;
      }
      for (const ref of rule.workflows ?? [rule.workflow]) {
        const found = findWorkflow(src.all, "id" in ref ? String(ref.id) : ref.name);
        if ("error" in found) {
          io.stderr(`flowrules pull: rule "${rule.name}": ${found.error}\n`);
          failed = true;
        } else ids.add(found.workflow.id);
      }
    }
    const workflows: WorkflowStructure[] = [];
    for (const id of [...ids].sort((a, b) => a - b)) {
      const w = src.all.find((x) => x.id === id);
      const read = await src.reader.read(id, w);
      if ("unavailable" in read) {
        // said, and left out: validate then says it cannot check the rules of this workflow
        io.stderr(`warning: ${read.unavailable}; it is left out of ${file}\n`);
        continue;
      }
      workflows.push(read.structure);
    }
    const catalog: Catalog = {
      format_version: CATALOG_FORMAT_VERSION,
      pulled_at: (opts.now ?? new Date()).toISOString(),
      base_url: client.baseUrl,
      workflows,
    };
    await writeFileAtomic(file, `${JSON.stringify(catalog, null, 2)}\n`);
    io.stderr(
      `${file}: ${plural(workflows.length, "workflow")} (${plural(client.stats().total, "request")} to ${serviceName(client.baseUrl, opts.profile)})\n`,
    );
    return failed ? EXIT_ERROR : EXIT_OK;
  } finally {
    await client.close();
  }
}
