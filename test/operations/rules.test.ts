/** The operating keys of a rule file: bad values refused at their line, and the active window's arithmetic. */
import { describe, expect, it } from "vitest";
import { compileSources } from "../../src/rules/load.js";
import { activity, nextActive, parseHours, type ActiveWindow } from "../../src/rules/active-window.js";
import { tagProblem } from "../../src/rules/operations.js";
import { notifyUrls } from "../../src/notify/urls.js";
import { optOutTag } from "../../src/cli/settings.js";

function diagnostics(yaml: string): Array<{ line: number; col: number; message: string }> {
  return compileSources([{ file: "rules.yaml", text: yaml }]).diagnostics.filter((d) => d.severity === "error");
}

const rule = (extra: string): string => `version: 1
rules:
  - name: r
    workflow: 1042
${extra}
    actions: [abort]
`;

describe("validation of mode, exclude and active", () => {
  it("accepts a complete, valid set of keys", () => {
    const loaded = compileSources([
      {
        file: "rules.yaml",
        text: rule(`    mode: audit
    exclude: { instance_ids: [5, 7], tags: [legal-hold] }
    active: { from: 2026-01-01, until: "2026-06-30T18:00:00+02:00", days: [mon, fri], hours: "22:00-06:00", timezone: America/New_York }`),
      },
    ]);
    expect(loaded.diagnostics).toEqual([]);
    const r = loaded.ruleSet?.rules[0];
    expect(r?.mode).toBe("audit");
    expect(r?.exclude).toEqual({ instance_ids: [5, 7], tags: ["legal-hold"] });
    expect(r?.active?.days).toEqual([1, 5]);
    expect(r?.active?.until).toBe(Date.parse("2026-06-30T16:00:00Z"));
  });

  const cases: Array<[string, string, number, RegExp]> = [
    [
      "until before from",
      "    active:\n      from: 2026-02-01\n      until: 2026-01-01",
      7,
      /until .* must be after active.from/,
    ],
    ["unknown day", "    active:\n      days: [mon, funday]", 6, /"funday", not one of: mon, tue/],
    [
      "hours 25:00-8",
      '    active:\n      hours: "25:00-8"',
      6,
      /hours "25:00-8" is not a time range: write "HH:MM-HH:MM"/,
    ],
    ["hours 25:00-08:00", '    active:\n      hours: "25:00-08:00"', 6, /does not exist/],
    [
      "unknown time zone",
      "    active:\n      timezone: Mars/Olympus",
      6,
      /unknown time zone "Mars\/Olympus"; use an IANA name/,
    ],
    ["ids not a list", "    exclude:\n      instance_ids: 5", 6, /"exclude.instance_ids" .* must be a list/],
    ["tags not a list", "    exclude:\n      tags: vip", 6, /"exclude.tags" .* must be a list/],
    ["a tag with a comma", '    exclude:\n      tags: [ok, "a,b"]', 6, /cannot hold a comma/],
    ["unknown mode", "    mode: dry", 5, /mode/],
  ];
  for (const [what, yaml, line, message] of cases) {
    it(`refuses ${what} at its line`, () => {
      const d = diagnostics(rule(yaml));
      expect(d).toHaveLength(1);
      expect(d[0]?.line).toBe(line);
      expect(d[0]?.message).toMatch(message);
    });
  }
});

describe("active window", () => {
  const berlinOffice: ActiveWindow = {
    timezone: "Europe/Berlin",
    days: [1, 2, 3, 4, 5],
    hours: { start: 8 * 60, end: 18 * 60, text: "08:00-18:00" },
  };

  it("is active inside days and hours in its time zone, across daylight saving", () => {
    expect(activity(berlinOffice, new Date("2026-07-01T06:30:00Z")).active).toBe(true); // 08:30 CEST
    expect(activity(berlinOffice, new Date("2026-07-01T16:30:00Z")).active).toBe(false); // 18:30 CEST
    expect(activity(berlinOffice, new Date("2026-12-02T16:30:00Z")).active).toBe(true); // 17:30 CET
  });

  it("says why not and when next", () => {
    const a = activity(berlinOffice, new Date("2026-11-07T10:00:00Z")); // Saturday
    expect(a.active).toBe(false);
    if (a.active) return;
    expect(a.reason).toMatch(/mon, tue, wed, thu, fri only; it is sat 11:00 Europe\/Berlin/);
    expect(a.next?.toISOString()).toBe("2026-11-09T07:00:00.000Z");
  });

  it("wraps hours past midnight and honours from/until", () => {
    const night: ActiveWindow = {
      timezone: "UTC",
      hours: { start: 22 * 60, end: 6 * 60, text: "22:00-06:00" },
      until: Date.parse("2026-01-10T00:00:00Z"),
    };
    expect(activity(night, new Date("2026-01-05T23:00:00Z")).active).toBe(true);
    expect(activity(night, new Date("2026-01-05T05:59:00Z")).active).toBe(true);
    expect(nextActive(night, Date.parse("2026-01-05T12:00:00Z"))?.toISOString()).toBe("2026-01-05T22:00:00.000Z");
    const ended = activity(night, new Date("2026-01-10T23:00:00Z"));
    expect(ended.active === false && ended.next).toBe(undefined);
    const later: ActiveWindow = { timezone: "UTC", from: Date.parse("2026-03-01T00:00:00Z") };
    const before = activity(later, new Date("2026-02-01T00:00:00Z"));
    expect(before.active === false && before.next?.toISOString()).toBe("2026-03-01T00:00:00.000Z");
  });

  it("parses hour ranges strictly", () => {
    expect(parseHours("08:00-18:00")).toEqual({ start: 480, end: 1080 });
    expect(parseHours("00:00-24:00")).toEqual({ start: 0, end: 1440 });
    for (const bad of ["8-18", "08:00-08:00", "24:30-01:00", "08:60-09:00"])
      expect(parseHours(bad)).toHaveProperty("error");
  });
});

describe("opt-out tag and notify URLs", () => {
  it("refuses tags a tag cannot be, and an empty tag turns the opt-out off", () => {
    expect(tagProblem("no-automation")).toBeUndefined();
    expect(tagProblem("a,b")).toMatch(/comma/);
    expect(tagProblem("a\nb")).toMatch(/control/);
    expect(optOutTag({}, {})).toBe("no-automation");
    expect(optOutTag({}, { FLOWRULES_OPT_OUT_TAG: "" })).toBeUndefined();
    expect(optOutTag({ optOutTag: "hands-off" }, { FLOWRULES_OPT_OUT_TAG: "x" })).toBe("hands-off");
    expect(() => optOutTag({ optOutTag: "a,b" }, {})).toThrow(/--opt-out-tag "a,b": a tag cannot hold a comma/);
  });

  it("accepts https and loopback http, refuses what is not a URL or plain http elsewhere", () => {
    expect(notifyUrls([], "https://hooks.example/a, http://127.0.0.1:9/b", false).map((u) => u.host)).toEqual([
      "hooks.example",
      "127.0.0.1:9",
    ]);
    expect(() => notifyUrls(["not a url"], "", false)).toThrow(/is not a URL/);
    expect(() => notifyUrls(["http://hooks.example/x"], "", false)).toThrow(/--insecure-http/);
    expect(notifyUrls(["http://hooks.example/x"], "", true)).toHaveLength(1);
    expect(() => notifyUrls(["ftp://hooks.example/x"], "", false)).toThrow(/not allowed/);
  });
});
