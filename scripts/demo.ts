/**
 * `npm run demo`: starts the sandbox in-process on a free loopback port and shows the dry-run plan of the starter
 * rules in `rules/` against its demo data. Nothing is applied.
 */
import { startSandbox } from "#flowrules/sandbox/index.js";
import { planCommand } from "#flowrules/commands/plan.js";
import { processIO } from "#flowrules/log/command-io.js";
import { profileHint } from "#flowrules/sandbox/hints.js";

async function main(): Promise<void> {
  const sandbox = await startSandbox({ port: 0 });
  const io = processIO(process.env);
  try {
    io.stderr(`Sandbox serving demo data at ${sandbox.baseUrl} (key sandbox-admin)\n\n`);
    const code = await planCommand(
      {
        paths: ["rules/"],
        format: "text",
        detailedExitcode: false,
        rules: [],
        quiet: false,
        connection: {
          baseUrl: sandbox.baseUrl,
          apiKey: "sandbox-admin",
          rateLimitPerMin: 0,
          concurrency: 4,
          timeoutMs: 30_000,
          insecureHttp: false,
        },
      },
      io,
    );
    // the README's five-minute tour, step 2: the same profile and variable the sandbox's banner prints
    io.stderr(
      "\nThat was a dry run. To try it yourself (the README's five-minute tour; `npm install -g .` puts flowrules on PATH,\n" +
        "or write npx flowrules):\n" +
        "  flowrules sandbox --port 4010                # in one terminal\n" +
        "  # in flowrules.config.yaml beside rules/, with default_profile: sandbox:\n" +
        profileHint("http://127.0.0.1:4010/api")
          .map((l) => `  ${l}\n`)
          .join("") +
        "  flowrules config --check                     # the settings in effect, and whether URL and key work\n" +
        "  flowrules plan --out plan.json               # then: flowrules apply plan.json\n" +
        "  flowrules plan --format html > plan.html     # review it in a browser\n",
    );
    process.exitCode = code === 2 ? 0 : code;
  } finally {
    await sandbox.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
