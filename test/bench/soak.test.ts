/** The soak benchmark runs for an hour (npm run bench:soak): here only its judgement of the targets and its table. */
import { describe, expect, it } from "vitest";
import { renderSoak, soakTargets, type SoakResult } from "../../bench/src/soak.js";

const RESULT: SoakResult = {
  options: {
    minutes: 60,
    instances: 20_000,
    peoplePerMin: 12,
    failRate: 0.03,
    resetRate: 0.01,
    seed: 1,
    cli: "dist/cli/index.js",
    kills: [12, 24],
    hup: 36,
  },
  marks: 120,
  reacted: 118,
  moot: 2,
  missedMarks: 0,
  missedAtEnd: 0,
  reactionMedianS: 8.2,
  reactionP95S: 21.5,
  afterReload: { marks: 20, reacted: 20, medianS: 9 },
  requests: 5400,
  requestsPerMin: 90,
  maxRequestsInAMinute: 99,
  status: { "200": 5200, "503": 160, "429": 40 },
  resets: 12,
  duplicates: 0,
  rssMb: { min5: 98, min30: 95, min60: 101, peak: 140 },
  rssGrowth30to60: 101 / 95 - 1,
  cycles: 300,
  reloads: 1,
  reloadFailures: 0,
  restarts: 2,
  peopleChanges: 700,
  stopS: 0.2,
  exitCode: 0,
};

describe("bench: the soak", () => {
  it("judges the issue's targets: nothing twice, nothing missed, RSS from minute 30 to 60, the reload, the stop", () => {
    expect(soakTargets(RESULT).every((t) => t.met)).toBe(true);
    const bad = soakTargets({
      ...RESULT,
      duplicates: 1,
      missedAtEnd: 3,
      rssGrowth30to60: 0.2,
      afterReload: { marks: 20, reacted: 10, medianS: 9 },
      exitCode: 1,
    });
    expect(bad.filter((t) => !t.met).map((t) => t.text)).toEqual([
      "mutations that took effect twice: 0",
      "changes missed: 0",
      "the added rule acts after the SIGHUP",
      "RSS from minute 30 to 60: at most +10 %",
      "SIGTERM at the end: exit 0 within 10 s",
    ]);
    expect(renderSoak(RESULT)).toMatch(/^\| RSS at minute 5 \/ 30 \/ 60, peak \| 98 \/ 95 \/ 101 MB, peak 140 MB \|$/m);
    expect(renderSoak(RESULT)).toMatch(/^\| RSS from minute 30 to 60: at most \+10 % \| 6\.3 % \| yes \|$/m);
  });
});
