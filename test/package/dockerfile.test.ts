/**
 * docs/deploy.md, "Docker": the image builds from the repository's Dockerfile. Without a Docker daemon, the build
 * stage is reproduced as Docker runs it: exactly what its COPY lines name (less what .dockerignore leaves out) is
 * copied into a temporary folder, its RUN lines run there (npm ci from npm's cache first), and the built CLI starts.
 * The runtime stage's COPY sources must exist (in the repository or the build stage's output), and the CLI laid out
 * as that stage lays it out answers `--version` and validates the starter rules. Where a daemon answers, the real
 * `docker build` runs too. Takes about 15–40 s (the npm ci).
 */
import { execFile, execFileSync } from "node:child_process";
import { cp, mkdir, readFile, symlink } from "node:fs/promises";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, posix, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { VERSION } from "../../src/model/version.js";
import { tempDir } from "../helpers/temp.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  name: string | undefined;
  instructions: Instruction[];
}

/** The Dockerfile's instructions by stage: comments dropped, continued lines joined. */
function stages(text: string): Stage[] {
  const joined = text
    .split("\n")
    .filter((l) => !/^\s*#/.test(l))
    .join("\n")
    .replace(/\\\n/g, " ");
  const out: Stage[] = [];
  for (const line of joined.split("\n")) {
    const m = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, op = "", args = ""] = m;
    if (op === "FROM") out.push({ name: /\sAS\s+(\S+)/i.exec(args)?.[1], instructions: [] });
    else out.at(-1)?.instructions.push({ op, args: args.trim() });
  }
  return out;
}

/** A COPY line's sources, destination and --from stage. */
function copyParts(args: string): { from?: string; sources: string[]; dest: string } {
  const words = args.split(/\s+/);
  const flags = words.filter((w) => w.startsWith("--"));
  const rest = words.filter((w) => !w.startsWith("--"));
  const from = flags.find((f) => f.startsWith("--from="))?.slice("--from=".length);
  const dest = rest.pop() ?? "";
  return { ...(from ? { from } : {}), sources: rest, dest };
}

const ignore = readFileSync(join(ROOT, ".dockerignore"), "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));
const ignored = picomatch(
  ignore.flatMap((p) => [p, `${p}/**`]),
  { dot: true },
);

/** Copies `source` (relative to `context`) as Docker's COPY does into `dest` under `workdir`; .dockerignore applies to the build context. */
async function copy(
  context: string,
  source: string,
  workdir: string,
  dest: string,
  applyIgnore: boolean,
): Promise<void> {
  const from = join(context, source);
  expect(existsSync(from), `COPY source ${source} exists`).toBe(true);
  // as Docker does: a directory's contents go into dest; a file into a dest ending in "/" keeps its own name
  const target =
    dest.endsWith("/") && !statSync(from).isDirectory()
      ? join(workdir, dest, posix.basename(source))
      : join(workdir, dest);
  await mkdir(dirname(target), { recursive: true });
  await cp(from, target, {
    recursive: true,
    filter: (f) => !applyIgnore || !ignored(relative(context, f).split("\\").join("/")),
  });
}

const dockerfile = await readFile(join(ROOT, "Dockerfile"), "utf8");
const [build, runtime] = stages(dockerfile);

/** Where a daemon answers, the real build runs too (none in most CI sandboxes: said in one line). */
const dockerAnswers = (() => {
  try {
    execFileSync("docker", ["info"], { stdio: "ignore", timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
})();

describe("the Dockerfile (docs/deploy.md, Docker)", () => {
  it("has a build stage and a runtime stage that runs the CLI as a non-root user", () => {
    expect(build?.name).toBe("build");
    const ops = (runtime?.instructions ?? []).map((i) => `${i.op} ${i.args}`);
    expect(ops).toContain('ENTRYPOINT ["flowrules"]');
    const user = ops.filter((o) => o.startsWith("USER ")).pop();
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^USER (root|0)\b/);
    // the entrypoint's link exists in the image: made by a RUN line
    expect(ops.some((o) => o.startsWith("RUN ") && o.includes("/usr/local/bin/flowrules"))).toBe(true);
  });

  it(
    "the build stage, reproduced: exactly its COPY lines, its RUN lines, then the built CLI starts; the runtime stage's files are all there",
    { timeout: 240_000 },
    async () => {
      const tmp = await tempDir("flowrules-docker-");
      const buildDir = join(tmp, "build");
      await mkdir(buildDir);
      const workdir = buildDir;
      for (const ins of build?.instructions ?? []) {
        if (ins.op === "WORKDIR") continue; // the build stage's one WORKDIR is buildDir
        if (ins.op === "COPY") {
          const c = copyParts(ins.args);
          for (const s of c.sources) await copy(ROOT, s, workdir, c.dest, true);
        } else if (ins.op === "RUN") {
          // npm ci takes the packages from npm's cache (the clone's own npm ci filled it)
          await run("sh", ["-c", ins.args], {
            cwd: workdir,
            env: { ...process.env, npm_config_prefer_offline: "true", npm_config_loglevel: "error" },
            timeout: 200_000,
          });
        }
      }
      const built = join(buildDir, "dist", "cli", "index.js");
      const cli = async (args: string[], cwd: string): Promise<string> =>
        (await run(process.execPath, [built, ...args], { cwd, env: { ...process.env, NO_COLOR: "1" } })).stdout;
      expect((await cli(["--version"], tmp)).trim()).toBe(VERSION);

      // the runtime stage's COPY lines: from the context or from the build stage; its production npm ci is stood in
      // for by the build stage's node_modules (the packed-tarball install test covers the production dependencies)
      const app = join(tmp, "app");
      await mkdir(app);
      for (const ins of runtime?.instructions ?? []) {
        if (ins.op !== "COPY") continue;
        const c = copyParts(ins.args);
        for (const s of c.sources) {
          if (c.from === "build") await copy(buildDir, relative("/src", s), app, c.dest, false);
          else await copy(ROOT, s, app, c.dest, true);
        }
      }
      await symlink(join(buildDir, "node_modules"), join(app, "node_modules"), "dir");
      const appCli = join(app, "dist", "cli", "index.js");
      const { stdout } = await run(process.execPath, [appCli, "validate", "rules/"], {
        cwd: app,
        env: { ...process.env, NO_COLOR: "1" },
      });
      expect(stdout).toMatch(/valid in \d+ files?, \d+ rules?/);
    },
  );

  it.runIf(dockerAnswers)("docker build, then the image's flowrules --version", { timeout: 600_000 }, async () => {
    const tag = `flowrules-test:${process.pid}`;
    await run("docker", ["build", "-q", "-t", tag, "."], { cwd: ROOT, timeout: 580_000 });
    try {
      const { stdout } = await run("docker", ["run", "--rm", tag, "--version"]);
      expect(stdout.trim()).toBe(VERSION);
      const { stdout: uid } = await run("docker", ["run", "--rm", "--entrypoint", "id", tag, "-u"]);
      expect(uid.trim()).not.toBe("0");
    } finally {
      await run("docker", ["rmi", "-f", tag]).catch(() => undefined);
    }
  });
  if (!dockerAnswers)
    console.log("dockerfile.test.ts: no Docker daemon answers `docker info`: the real `docker build` case is skipped");
});
