/**
 * Issue 35, point 4: the atomic writer's temporary file is created exclusively and never through a link. A link
 * planted at the temporary name (someone who can write the folder and guess the name) must not have its target
 * written: the writer takes another name and the planted link and its target stay as they were.
 */
import { lstat, readdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { writeFileAtomic } from "../../src/fs/write-file.js";
import { tempDir } from "../helpers/temp.js";

/** The next random bytes the writer asks for, when a test sets them (then the real ones again). */
const planted = vi.hoisted(() => ({ next: [] as Buffer[] }));
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  return { ...actual, randomBytes: (n: number) => planted.next.shift() ?? actual.randomBytes(n) };
});

describe("the temporary file", () => {
  it("is never opened through a link planted at its name", async () => {
    const dir = await tempDir();
    const victim = join(dir, "victim.txt");
    await writeFile(victim, "secret stays");
    const guessed = Buffer.from("0123456789ab", "hex");
    const tempName = join(dir, `.out.txt.${process.pid}.${guessed.toString("hex")}.tmp`);
    await symlink(victim, tempName);
    planted.next.push(guessed);
    await writeFileAtomic(join(dir, "out.txt"), "written");
    expect(await readFile(join(dir, "out.txt"), "utf8")).toBe("written");
    expect(await readFile(victim, "utf8")).toBe("secret stays");
    expect((await lstat(tempName)).isSymbolicLink()).toBe(true);
    expect(await readlink(tempName)).toBe(victim);
    // the planted link is left to whoever planted it; no temporary file of the writer's own is left
    expect((await readdir(dir)).sort()).toEqual(
      [".out.txt." + process.pid + "." + guessed.toString("hex") + ".tmp", "out.txt", "victim.txt"].sort(),
    );
  });

  it("gives up in one line naming the file when every name it tries is taken", async () => {
    const dir = await tempDir();
    const guessed = Buffer.from("abcdefabcdef", "hex");
    await writeFile(join(dir, `.out.txt.${process.pid}.${guessed.toString("hex")}.tmp`), "someone else's");
    planted.next.push(guessed, guessed, guessed, guessed, guessed);
    await expect(writeFileAtomic(join(dir, "out.txt"), "written")).rejects.toThrow(
      /^cannot write .*out\.txt: something already stands at a name it must create \(EEXIST\)$/,
    );
    expect(await readFile(join(dir, `.out.txt.${process.pid}.${guessed.toString("hex")}.tmp`), "utf8")).toBe(
      "someone else's",
    );
  });
});
