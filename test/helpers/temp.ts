/**
 * What a test creates, removed when its file is done, passed or failed: temp dirs made with `tempDir`, and servers
 * or processes handed to `closeAfterAll`. test/helpers/setup.ts runs the clean-up after every test file, and
 * test/helpers/global-setup.ts checks that a whole run leaves its temp dir empty.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const cleanups: Array<() => Promise<void> | void> = [];

/** A fresh folder under the run's temp dir, removed after the test file. */
export async function tempDir(prefix = "flowrules-test-"): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Closes `thing` (a sandbox, a proxy, a server) after the test file; returns it, for `const sb = closeAfterAll(await …)`. */
export function closeAfterAll<T extends { close(): Promise<unknown> | unknown }>(thing: T): T {
  cleanups.push(async () => {
    await thing.close();
  });
  return thing;
}

/** Runs every clean-up registered so far, the latest first; a failing one does not stop the others. */
export async function cleanUp(): Promise<void> {
  const errors: unknown[] = [];
  while (cleanups.length > 0) {
    const next = cleanups.pop();
    try {
      await next?.();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw new AggregateError(errors, "clean-up failed");
}
