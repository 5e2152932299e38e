/**
 * The one lock (src/fs/lock.ts) under contention, as real runs meet it: many processes, started together, race for
 * one stale lock, round after round — a dead owner's on this host, an older flowrules' state lock, another host's
 * with a stopped heartbeat, one whose earlier take-over was left half done by a run killed in the middle. Each round
 * exactly one wins; every other one is refused naming the winner; the lock file is the winner's, and nothing but it
 * is left in the dir. (`npm test` builds dist/ first: the contenders load the built module, as the CLI does.)
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { closeAfterAll, tempDir } from "../helpers/temp.js";

const LOCK_MODULE = fileURLToPath(new URL("../../dist/fs/lock.js", import.meta.url));
const CONTENDERS = 12;
const ROUNDS = 16;

/** A contender: takes the lock when told (at a shared instant), says how it went, releases when told. */
const CONTENDER = `
import { acquireLock } from ${JSON.stringify(LOCK_MODULE)};
import { createInterface } from "node:readline";
let held;
process.stdout.write("ready\\n");
for await (const line of createInterface({ input: process.stdin })) {
  const [cmd, file, at] = line.split(" ");
  if (cmd === "go") {
    while (Date.now() < Number(at)) {} // all start at once
    try {
      held = acquireLock(file, { applying: "race", timeoutMs: 60000, unreadableIsStale: true });
      process.stdout.write("won " + held.owner.token + (held.tookOver ? " took-over" : "") + "\\n");
    } catch (err) {
      process.stdout.write("lost " + err.constructor.name + " " + String(err.message).split("\\n")[0] + "\\n");
    }
  } else if (cmd === "release") {
    held?.release();
    held = undefined;
    process.stdout.write("released\\n");
  }
}
`;

interface Contender {
  child: ChildProcessWithoutNullStreams;
  lines: Interface;
  next(): Promise<string>;
}

function start(): Contender {
  const child = spawn(process.execPath, ["--input-type=module", "-e", CONTENDER], { stdio: ["pipe", "pipe", "pipe"] });
  const lines = createInterface({ input: child.stdout });
  const queue: string[] = [];
  const waiting: Array<(line: string) => void> = [];
  lines.on("line", (line) => {
    const w = waiting.shift();
    if (w) w(line);
    else queue.push(line);
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.on("exit", (code) => {
    for (const w of waiting.splice(0)) w(`exited ${code} ${stderr.trim()}`);
  });
  return {
    child,
    lines,
    next: () =>
      queue.length > 0 ? Promise.resolve(queue.shift() as string) : new Promise((resolve) => waiting.push(resolve)),
  };
}

/** The pid of a process that ran on this host and is gone. */
function deadPid(): number {
  return Number(
    spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout,
  );
}

const contenders: Contender[] = [];
afterAll(() => {
  for (const c of contenders) c.child.stdin.end();
});

describe("the lock, raced for by many processes", () => {
  it(`${CONTENDERS} processes racing for one stale lock, ${ROUNDS} rounds: exactly one wins each round`, async () => {
    const dir = await tempDir("flowrules-lock-race-");
    for (let i = 0; i < CONTENDERS; i++) {
      const c = start();
      contenders.push(c);
      closeAfterAll({ close: () => void c.child.kill() });
    }
    expect(await Promise.all(contenders.map((c) => c.next()))).toEqual(contenders.map(() => "ready"));
    const now = Date.now();
    const dead = [deadPid(), deadPid(), deadPid()];
    for (let round = 0; round < ROUNDS; round++) {
      const file = join(dir, `round-${round}.lock`);
      const stale = [
        // a run killed on this host
        {
          pid: dead[0],
          host: hostname(),
          started_at: new Date(now).toISOString(),
          applying: "killed",
          token: `dead${round}`,
        },
        // an older flowrules' state lock: no token, `since`
        { pid: dead[1], host: hostname(), since: new Date(now - 60_000).toISOString() },
        // another host, heartbeat stopped long ago
        {
          pid: 4242,
          host: "elsewhere.example",
          started_at: new Date(now - 7_200_000).toISOString(),
          heartbeat_at: new Date(now - 3_600_000).toISOString(),
          applying: "x",
          token: `far${round}`,
        },
      ][round % 3];
      const text = `${JSON.stringify(stale)}\n`;
      writeFileSync(file, text);
      if (round % 4 === 3) {
        // a contender of an earlier race killed while holding its claim on this very lock
        const claim = `${file}.claim.${createHash("sha256").update(text).digest("hex").slice(0, 16)}`;
        writeFileSync(
          claim,
          JSON.stringify({
            pid: dead[2],
            host: hostname(),
            started_at: new Date(now).toISOString(),
            applying: "race",
            token: `claim${round}`,
          }),
        );
      }
      const at = Date.now() + 40;
      for (const c of contenders) c.child.stdin.write(`go ${file} ${at}\n`);
      const results = await Promise.all(contenders.map((c) => c.next()));
      const won = results.filter((r) => r.startsWith("won "));
      expect(won, `round ${round}: ${results.join(" | ")}`).toHaveLength(1);
      // (the winner may be one that found the path free after another removed the stale lock and lost the race)
      for (const r of results.filter((x) => !x.startsWith("won ")))
        expect(r, `round ${round}`).toMatch(
          /^lost LockHeldError another apply holds the lock .*: pid \d+ on .*, applying race/,
        );
      // the file is the winner's, and nothing else is left beside it (no claim, no temporary file)
      const token = won[0]?.split(" ")[1];
      expect((JSON.parse(readFileSync(file, "utf8")) as { token: string }).token).toBe(token);
      expect(readdirSync(dir).filter((n) => n.startsWith(`round-${round}.`))).toEqual([`round-${round}.lock`]);
      for (const c of contenders) c.child.stdin.write("release\n");
      expect(await Promise.all(contenders.map((c) => c.next()))).toEqual(contenders.map(() => "released"));
      expect(readdirSync(dir).filter((n) => n.startsWith(`round-${round}.`))).toEqual([]);
    }
  }, 120_000);
});
