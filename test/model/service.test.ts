/**
 * One answer to "same service?" (src/model/service.ts), used by the plan file, the catalog, the bookmarks, the state
 * dir and the profile key's guard.
 */
import { describe, expect, it } from "vitest";
import { sameService } from "../../src/model/service.js";

describe("sameService", () => {
  it("one service however its URL is spelled", () => {
    expect(sameService("https://wis.example/api", "https://wis.example/api/")).toBe(true);
    expect(sameService("HTTPS://WIS.example/api", "https://wis.example/api")).toBe(true);
    expect(sameService("https://wis.example:443/api", "https://wis.example/api")).toBe(true);
    expect(sameService("http://127.0.0.1:80/", "http://127.0.0.1")).toBe(true);
  });

  it("another host, port, scheme, path or user is another service", () => {
    expect(sameService("https://wis.example/api", "https://other.example/api")).toBe(false);
    expect(sameService("http://127.0.0.1:8080", "http://127.0.0.1:8081")).toBe(false);
    expect(sameService("http://wis.example/api", "https://wis.example/api")).toBe(false);
    expect(sameService("https://wis.example/api", "https://wis.example/api/v2")).toBe(false);
    expect(sameService("https://wis.example/API", "https://wis.example/api")).toBe(false);
    expect(sameService("https://a@wis.example/api", "https://wis.example/api")).toBe(false);
  });

  it("text that is no URL is only itself", () => {
    expect(sameService("not a url", "not a url/")).toBe(true);
    expect(sameService("not a url", "https://wis.example")).toBe(false);
  });
});
