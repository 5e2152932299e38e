/**
 * The few git commands `--changed-since` needs, run with execFile (no shell: a ref or path is never interpreted
 * by one). Failures become UserErrors that say what to do, never git's raw usage text.
 */
import { execFile } from "node:child_process";
import { UserError } from "../model/errors.js";

/** A rule file at a ref can be large; git output is buffered whole. */
const MAX_BUFFER = 64 * 1024 * 1024;

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs git; resolves with its exit code (never rejects for a non-zero exit), rejects only when git cannot start. */
export function git(args: string[], cwd: string): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      args,
      // LC_ALL=C keeps messages stable; GIT_TERMINAL_PROMPT=0 so git never waits for input in CI
      { cwd, maxBuffer: MAX_BUFFER, encoding: "utf8", env: { ...process.env, LC_ALL: "C", GIT_TERMINAL_PROMPT: "0" } },
      (err, stdout, stderr) => {
        if (err && typeof (err as NodeJS.ErrnoException).code === "string") {
          // ENOENT and friends: git itself could not be run
          const code = (err as NodeJS.ErrnoException).code;
          reject(
            new UserError(
              code === "ENOENT"
                ? "--changed-since needs git, and no `git` is on the PATH"
                : `cannot run git: ${err.message}`,
            ),
          );
          return;
        }
        const exit = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code: exit, stdout, stderr });
      },
    );
  });
}

/** The repository's top folder containing `dir`, or a UserError when `dir` is not inside a git work tree. */
export async function repoRoot(dir: string, flag = "--changed-since"): Promise<string> {
  const r = await git(["rev-parse", "--show-toplevel"], dir);
  if (r.code !== 0) {
    throw new UserError(`${flag} compares rules with a git ref, but ${dir} is not inside a git repository`);
  }
  return r.stdout.trim();
}

/** The commit a ref names (branch, tag, sha, HEAD~1 …), or a UserError naming the ref. */
export async function resolveCommit(ref: string, root: string, flag = "--changed-since"): Promise<string> {
  // a ref starting with "-" would be read by git as an option
  if (ref.trim() === "" || ref.startsWith("-")) throw new UserError(`${flag}: ${JSON.stringify(ref)} is not a git ref`);
  const r = await git(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], root);
  if (r.code !== 0) {
    throw new UserError(
      `${flag}: unknown git ref "${ref}" in ${root}; in CI, fetch it first (e.g. actions/checkout with fetch-depth: 0, or git fetch origin main)`,
    );
  }
  return r.stdout.trim();
}

/** Files (paths relative to the repository root) below `path` at `commit`; `path` "" means the whole tree. */
export async function filesAt(commit: string, path: string, root: string): Promise<string[]> {
  const r = await git(["ls-tree", "-r", "-z", "--name-only", commit, "--", path === "" ? "." : path], root);
  if (r.code !== 0)
    throw new UserError(`git ls-tree failed for ${path || "."} at ${commit.slice(0, 12)}: ${r.stderr.trim()}`);
  return r.stdout.split("\0").filter((s) => s !== "");
}

/** A file's text at `commit` (path relative to the repository root). */
export async function showFile(commit: string, path: string, root: string): Promise<string> {
  const r = await git(["show", `${commit}:${path}`], root);
  if (r.code !== 0) throw new UserError(`git show ${commit.slice(0, 12)}:${path} failed: ${r.stderr.trim()}`);
  return r.stdout;
}
