/**
 * The watcher's bookmarks (docs/watch.md, "Bookmarks"): per workflow the newest `last_updated_time` seen — the
 * service's clock, never ours — with the base URL and the rules' digest, in `<state>/watch/bookmarks.json`. Written
 * whole or not at all (src/fs/write-file.ts): a crash leaves the previous bookmarks.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { UserError } from "../model/errors.js";
import { sameService } from "../model/service.js";
import { writeFileAtomic } from "../fs/write-file.js";

export const BookmarksSchema = z.object({
  format_version: z.literal(1),
  base_url: z.string(),
  rules_digest: z.string(),
  /** workflow id → the newest last_updated_time seen (the service's clock) */
  workflows: z.record(z.string(), z.string()),
});
export type Bookmarks = z.infer<typeof BookmarksSchema>;

/**
 * The bookmarks of `file`, or undefined when there are none or they cannot be read (a cycle then runs at once and
 * rewrites them). Bookmarks made for another service are refused in one line: a state dir belongs to one base URL.
 */
export async function readBookmarks(file: string, baseUrl: string): Promise<Bookmarks | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const b = BookmarksSchema.safeParse(parsed);
  if (!b.success) return undefined;
  if (!sameService(b.data.base_url, baseUrl)) {
    throw new UserError(
      `the state dir was made for ${b.data.base_url}, not ${baseUrl}: give each service its own --state`,
    );
  }
  return b.data;
}

export function writeBookmarks(file: string, b: Bookmarks): Promise<void> {
  return writeFileAtomic(file, `${JSON.stringify(b, null, 2)}\n`);
}

/** For rules of another digest the bookmarks say nothing: every workflow is read again (the state room decides how). */
export function forRules(b: Bookmarks | undefined, digest: string): Bookmarks | undefined {
  return b && b.rules_digest !== digest ? { ...b, rules_digest: digest, workflows: {} } : b;
}
