/**
 * `flowrules init [dir] [--workflow ID|NAME]...`: a starter rule file per workflow (modeline, a `fields:` alias for
 * every form field, by name, and a report rule that runs as is) and a test file skeleton beside it. Never overwrites
 * a file: one that exists is left as it is and said so.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { stringify } from "#yaml";
import { clientFrom, type Workflow } from "../api/index.js";
import type { ConnectionSettings } from "../model/settings.js";
import { EXIT_ERROR, EXIT_OK } from "../model/errors.js";
import { aliasOf, fieldAliases, type WorkflowStructure } from "../model/structure.js";
import type { CommandIO } from "../log/command-io.js";
import { clientEventLogger, nullLogger } from "../log/index.js";
import { pickWorkflow, workflowSource } from "./workflow-source.js";

export interface InitOptions {
  dir: string;
  /** ids or names; none means every workflow the key sees */
  workflows: string[];
  connection: ConnectionSettings;
  now?: Date;
}

/**
 * The folder a rules repository starts at: the nearest one at or above `dir` with a package.json or a .git, else the
 * current directory. Its package.json depends on flowrules (README.md, "A rules repository"), so every clone has the
 * schemas at node_modules/flowrules/schemas/ after `npm ci`.
 */
export function projectRoot(dir: string, cwd: string = process.cwd()): string {
  let at = resolve(cwd, dir);
  for (;;) {
    if (existsSync(join(at, "package.json")) || existsSync(join(at, ".git"))) return at;
    const up = dirname(at);
    if (up === at) return resolve(cwd);
    at = up;
  }
}

/** Where the schemas are for every clone: flowrules's own schemas/ in its repository, node_modules/flowrules/schemas/ in a rules repository. */
function schemasOf(root: string): string {
  try {
    const name = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name?: unknown }).name;
    if (name === "flowrules") return join(root, "schemas");
  } catch {
    // no package.json (or not JSON): a rules repository still to get one
  }
  return join(root, "node_modules", "flowrules", "schemas");
}

/**
 * The `$schema` of a file written into `dir`: a path relative to it, inside the repository, the same on every clone
 * (never the path of this machine's install, which exists on one machine only).
 */
export function schemaRef(dir: string, file: string, cwd: string = process.cwd()): string {
  const rel = relative(resolve(cwd, dir), join(schemasOf(projectRoot(dir, cwd)), file))
    .split(sep)
    .join("/");
  return rel.startsWith(".") ? rel : `./${rel}`;
}

/** What flowrules writes locally and a rules repository does not commit (the config file and the catalog are committed). */
export const GITIGNORE_BLOCK = [
  "# flowrules: what it writes locally (flowrules init); flowrules.config.yaml and flowrules.workflows.json are committed",
  "node_modules/",
  ".flowrules/",
  "/plan.json",
  "/plan.html",
  "/plan.md",
  "*.journal.jsonl",
  "*.journal.jsonl.lock",
  "flowrules-tests.xml",
  "flowrules.log.jsonl",
  "",
].join("\n");

/** Adds the block to the repository's .gitignore once (a file that has it already is left as it is). */
async function ignoreLocalFiles(root: string, io: CommandIO): Promise<void> {
  const file = join(root, ".gitignore");
  const before = await readFile(file, "utf8").catch(() => undefined);
  if (before?.includes(GITIGNORE_BLOCK.split("\n")[0] ?? "")) return;
  await writeFile(
    file,
    before === undefined
      ? GITIGNORE_BLOCK
      : `${before}${before.endsWith("\n") || before === "" ? "" : "\n"}\n${GITIGNORE_BLOCK}`,
  );
  io.stderr(`${before === undefined ? "wrote" : "added flowrules' block to"} ${file}\n`);
}

/**
 * A service's name inside a YAML comment: a line break (or any control or line-separator character) in it would end
 * the comment and write the rest as YAML; such characters are written as visible \uXXXX escapes.
 */
export function commentText(name: string): string {
  return name.replace(
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`,
  );
}

function slug(name: string): string {
  return aliasOf(name).replace(/_/g, "-");
}

function workflowRef(w: Workflow, all: readonly Workflow[]): number | { name: string } {
  // by name when the name is unique: the rule then runs unchanged on a tenant where the ids differ
  return all.filter((x) => x.name === w.name).length === 1 ? { name: w.name } : w.id;
}

export function starterRules(
  w: Workflow,
  all: readonly Workflow[],
  s: WorkflowStructure | undefined,
  schema: string,
): string {
  const name = `${slug(w.name)}-overview`;
  const fields: Record<string, { step: string | number; action: string | number }> = {};
  const comments: string[] = [];
  if (s) {
    const aliases = fieldAliases(s);
    for (const st of s.steps) {
      const stepUnique = s.steps.filter((x) => x.name === st.name).length === 1;
      for (const a of st.actions) {
        const actionUnique = st.actions.filter((x) => x.name === a.name).length === 1;
        fields[aliases.get(a.id) ?? `field_${a.id}`] = {
          step: stepUnique ? st.name : st.id,
          action: actionUnique ? a.name : a.id,
        };
      }
    }
  } else {
    comments.push(
      "# The workflow has no instance yet, so its steps and fields could not be read: add `fields:` later",
      "# (`flowrules describe` lists them once an instance exists).",
    );
  }
  const columns = [
    "id",
    "name",
    "status",
    ...Object.keys(fields)
      .slice(0, 3)
      .map((a) => `fields.${a}`),
  ];
  const ref = workflowRef(w, all);
  const q = (v: string | number): string => (typeof v === "number" ? String(v) : JSON.stringify(v));
  const width = Math.max(0, ...Object.keys(fields).map((a) => a.length));
  const lines = [
    `# yaml-language-server: $schema=${schema}`,
    `# Starter rules for workflow ${w.id} "${commentText(w.name)}"${w.folder?.name ? ` (folder ${commentText(w.folder.name)})` : ""}, written by \`flowrules init\`.`,
    "# Steps and fields are named as the workflow shows them; `flowrules describe` lists their ids.",
    ...comments,
    "version: 1",
    "rules:",
    `  - name: ${name}`,
    `    description: ${q(`Running instances of "${w.name}" by status: a report, it changes nothing`)}`,
    `    workflow: ${typeof ref === "number" ? `${ref}` : `{ name: ${q(ref.name)} }`}`,
  ];
  if (Object.keys(fields).length > 0) {
    lines.push("    fields:");
    for (const [alias, f] of Object.entries(fields))
      lines.push(`      ${`${alias}:`.padEnd(width + 1)} { step: ${q(f.step)}, action: ${q(f.action)} }`);
  }
  lines.push(
    "    select: { status: [running] }",
    "    actions:",
    "      - report:",
    `          title: ${q(`${w.name}: running instances`)}`,
    "          group_by: status",
    `          columns: [${columns.join(", ")}]`,
  );
  return `${lines.join("\n")}\n`;
}

export function starterTests(w: Workflow, all: readonly Workflow[], schema: string, now: Date): string {
  const ref = workflowRef(w, all);
  const doc = {
    version: 1,
    now: now.toISOString().replace(/\.\d{3}Z$/, "Z"),
    ...(typeof ref === "object" ? { workflows: { [w.name]: w.id } } : {}),
    tests: [
      {
        name: "running instances are reported, finished ones are not",
        rule: `${slug(w.name)}-overview`,
        instances: [
          { id: 1, name: "A running instance" },
          { id: 2, name: "A completed instance", status: "completed" },
        ],
        expect: { selected: [1], matched: [1], changes: [] },
      },
    ],
  };
  const head = [
    `# yaml-language-server: $schema=${schema}`,
    `# Tests of the starter rules for "${commentText(w.name)}": run with \`flowrules test\`. Add instances with \`fields:\` by alias.`,
  ];
  return `${head.join("\n")}\n${stringify(doc, { lineWidth: 0 })}`;
}

async function writeNew(file: string, text: string, io: CommandIO): Promise<boolean> {
  try {
    await writeFile(file, text, { flag: "wx" });
    io.stderr(`wrote ${file}\n`);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    io.stderr(`${file} exists; left as it is\n`);
    return false;
  }
}

export async function initCommand(opts: InitOptions, io: CommandIO): Promise<number> {
  const client = clientFrom(opts.connection, { onEvent: clientEventLogger(io.log ?? nullLogger) });
  try {
    const src = await workflowSource(client);
    const chosen = opts.workflows.length > 0 ? opts.workflows.map((ref) => pickWorkflow(src, ref)) : src.all;
    if (chosen.length === 0) {
      io.stderr("flowrules init: this API key sees no workflow\n");
      return EXIT_ERROR;
    }
    await mkdir(opts.dir, { recursive: true });
    const now = opts.now ?? new Date();
    for (const w of chosen) {
      const read = await src.reader.read(w.id, w);
      if ("unavailable" in read) io.stderr(`warning: ${read.unavailable}; its rule file has no fields\n`);
      const base = join(opts.dir, slug(w.name));
      await writeNew(
        `${base}.yaml`,
        starterRules(
          w,
          src.all,
          "structure" in read ? read.structure : undefined,
          schemaRef(dirname(`${base}.yaml`), "rules.schema.json"),
        ),
        io,
      );
      await writeNew(
        `${base}.test.yaml`,
        starterTests(w, src.all, schemaRef(opts.dir, "rules-test.schema.json"), now),
        io,
      );
    }
    await ignoreLocalFiles(projectRoot(opts.dir), io);
    return EXIT_OK;
  } finally {
    await client.close();
  }
}
