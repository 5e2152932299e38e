/** A throwaway git repository for --changed-since tests (identity via -c flags, no global config needed). */
import { execFile } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { tempDir } from "../helpers/temp.js";

const run = promisify(execFile);

export interface TempRepo {
  dir: string;
  write(path: string, text: string): Promise<void>;
  remove(path: string): Promise<void>;
  commit(message: string): Promise<string>;
  git(...args: string[]): Promise<string>;
}

export async function tempRepo(): Promise<TempRepo> {
  const dir = await tempDir("flowrules-git-");
  const git = async (...args: string[]): Promise<string> => {
    const { stdout } = await run(
      "git",
      ["-c", "user.email=ci@example.com", "-c", "user.name=CI", "-c", "commit.gpgsign=false", ...args],
      {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", HOME: dir, GIT_CONFIG_NOSYSTEM: "1" },
      },
    );
    return stdout.trim();
  };
  await git("init", "-q", "-b", "main");
  return {
    dir,
    git,
    async write(path, text) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    },
    async remove(path) {
      await rm(join(dir, path));
    },
    async commit(message) {
      await git("add", "-A");
      await git("commit", "-q", "--allow-empty", "-m", message);
      return git("rev-parse", "HEAD");
    },
  };
}
