/** The programs some tests need (./programs.ts), and the run's one line about the tests skipped without them. */

export type Program = "zsh" | "fish" | "chromium";

/** The Debian package that installs each program (README.md, "Tests"). */
export const PACKAGES: Record<Program, string> = { zsh: "zsh", fish: "fish", chromium: "chromium-headless-shell" };

/** Where the workers note their skips for the run's summary line (a file set by ./global-setup.ts). */
export const SKIPS_ENV = "FLOWRULES_TEST_SKIPS";

/** The run's summary of the notes: "skipped 5 completion tests, 16 browser tests: install zsh, fish and … (apt-get …)". */
export function skipSummary(lines: string[]): string | undefined {
  const counts = new Map<string, number>();
  const programs = new Set<Program>();
  for (const line of lines) {
    if (line.trim() === "") continue;
    const note = JSON.parse(line) as { what: string; missing: Program[] };
    counts.set(note.what, (counts.get(note.what) ?? 0) + 1);
    for (const p of note.missing) programs.add(p);
  }
  if (counts.size === 0) return undefined;
  const tests = [...counts].map(([what, n]) => `${n} ${what} test${n === 1 ? "" : "s"}`).join(", ");
  const names = [...programs].map((p) => PACKAGES[p]);
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
  return `skipped ${tests}: install ${list} (apt-get install -y ${names.join(" ")}); with CI=true they fail instead`;
}
