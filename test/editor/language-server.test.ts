/**
 * Editor completion and hover through the real yaml-language-server (the server VS Code's YAML extension runs),
 * driven over stdio LSP with our committed schemas/rules.schema.json named in the file's modeline.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const require = createRequire(import.meta.url);
const SERVER = join(dirname(require.resolve("yaml-language-server/package.json")), "bin", "yaml-language-server");
const SCHEMA = pathToFileURL(fileURLToPath(new URL("../../schemas/rules.schema.json", import.meta.url))).href;

interface Message {
  id?: number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { message: string };
}

/** A minimal LSP client: Content-Length framing, requests by id, and answers to the server's own requests. */
class Lsp {
  private buf = Buffer.alloc(0);
  private next = 1;
  private pending = new Map<number, (m: Message) => void>();
  constructor(private child: ChildProcess) {
    child.stdout?.on("data", (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      for (;;) {
        const head = this.buf.indexOf("\r\n\r\n");
        if (head < 0) return;
        const len = Number(/Content-Length: (\d+)/i.exec(this.buf.subarray(0, head).toString())?.[1] ?? 0);
        if (this.buf.length < head + 4 + len) return;
        const msg = JSON.parse(this.buf.subarray(head + 4, head + 4 + len).toString()) as Message;
        this.buf = this.buf.subarray(head + 4 + len);
        this.onMessage(msg);
      }
    });
  }
  private onMessage(m: Message): void {
    if (m.method !== undefined && m.id !== undefined) {
      // the server asks for settings (workspace/configuration) or to register capabilities: plain answers
      const result =
        m.method === "workspace/configuration"
          ? ((m.params as { items?: unknown[] }).items ?? []).map(() => null)
          : null;
      this.send({ id: m.id, result });
      return;
    }
    if (m.id !== undefined) {
      const done = this.pending.get(m.id);
      this.pending.delete(m.id);
      done?.(m);
    }
  }
  private send(m: object): void {
    const body = JSON.stringify({ jsonrpc: "2.0", ...m });
    this.child.stdin?.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }
  notify(method: string, params: unknown): void {
    this.send({ method, params });
  }
  request<T>(method: string, params: unknown): Promise<T> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (m) => (m.error ? reject(new Error(m.error.message)) : resolve(m.result as T)));
      this.send({ id, method, params });
    });
  }
}

let child: ChildProcess;
let lsp: Lsp;
let docs = 0;

beforeAll(async () => {
  child = spawn(process.execPath, [SERVER, "--stdio"], { stdio: ["pipe", "pipe", "ignore"] });
  lsp = new Lsp(child);
  await lsp.request("initialize", {
    processId: process.pid,
    rootUri: null,
    capabilities: {
      textDocument: {
        completion: { completionItem: { snippetSupport: true } },
        hover: { contentFormat: ["markdown", "plaintext"] },
      },
      workspace: { configuration: true },
    },
  });
  lsp.notify("initialized", {});
  lsp.notify("workspace/didChangeConfiguration", {
    settings: { yaml: { completion: true, hover: true, validate: true, schemaStore: { enable: false } } },
  });
});
afterAll(() => {
  child.kill();
});

/** Opens `text` (where `|` marks the cursor) and returns the cursor position and the document URI. */
function open(text: string): { uri: string; position: { line: number; character: number } } {
  const at = text.indexOf("|");
  const before = text.slice(0, at);
  const line = before.split("\n").length - 1;
  const character = at - (before.lastIndexOf("\n") + 1);
  const uri = `file:///flowrules-editor-test/rules-${++docs}.yaml`;
  lsp.notify("textDocument/didOpen", {
    textDocument: { uri, languageId: "yaml", version: 1, text: text.replace("|", "") },
  });
  return { uri, position: { line, character } };
}

async function completions(text: string): Promise<string[]> {
  const { uri, position } = open(text);
  const r = await lsp.request<{ items: Array<{ label: string }> } | Array<{ label: string }>>(
    "textDocument/completion",
    { textDocument: { uri }, position },
  );
  return (Array.isArray(r) ? r : r.items).map((i) => i.label);
}

const HEAD = `# yaml-language-server: $schema=${SCHEMA}
version: 1
rules:
  - name: r
    workflow: 1042
`;

describe("yaml-language-server with schemas/rules.schema.json", () => {
  it("offers every action kind inside an actions: list item", async () => {
    const labels = await completions(`${HEAD}    actions:\n      - |\n`);
    for (const kind of ["complete_step", "save_step", "abort", "report"]) expect(labels).toContain(kind);
  }, 30_000);

  it("offers the list parameters of the service inside select", async () => {
    const labels = await completions(`${HEAD}    select:\n      |\n    actions: [abort]\n`);
    for (const p of ["status", "active_step_id", "tags", "started_time_after", "deadline_before", "priority"])
      expect(labels).toContain(p);
  }, 30_000);

  it("offers the keys of a step action, including its step by id or name", async () => {
    const labels = await completions(`${HEAD}    actions:\n      - complete_step:\n          |\n`);
    expect(labels).toEqual(expect.arrayContaining(["step", "inputs"]));
  }, 30_000);

  it("shows the description of a key on hover", async () => {
    const { uri, position } = open(
      `${HEAD.replace("    workflow: 1042", "    work|flow: 1042")}    actions: [abort]\n`,
    );
    const r = await lsp.request<{ contents: { value: string } | string } | null>("textDocument/hover", {
      textDocument: { uri },
      position,
    });
    const text = typeof r?.contents === "string" ? r.contents : (r?.contents.value ?? "");
    expect(text).toMatch(/workflow/i);
    expect(text.length).toBeGreaterThan(20);
  }, 30_000);
});

const CONFIG_SCHEMA = pathToFileURL(
  fileURLToPath(new URL("../../schemas/flowrules.config.schema.json", import.meta.url)),
).href;

describe("yaml-language-server with schemas/flowrules.config.schema.json", () => {
  it("offers the keys of a profile, and never a key for the API key itself", async () => {
    const labels = await completions(
      `# yaml-language-server: $schema=${CONFIG_SCHEMA}\ndefault_profile: prod\nprofiles:\n  prod:\n    |\n`,
    );
    for (const key of ["base_url", "rate_limit", "api_key_env", "workflows", "notify", "opt_out_tag", "state"])
      expect(labels).toContain(key);
    expect(labels).not.toContain("api_key");
  }, 30_000);
});
