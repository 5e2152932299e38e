/**
 * The trust policy of a run's connection, apart from the readers of ./settings.ts: which service URL is accepted
 * (http(s), no credentials in it, plain http only to loopback or with --insecure-http) and which API key may go to
 * it (the key variable, ENV.apiKey, else the profile's api_key_env, and a profile's key only to that profile's own
 * base_url: docs/operating.md, Profiles). Every key resolved is remembered so that logs and the last-resort error
 * line scrub it (src/cli/index.ts).
 */
import { InsecureUrlError } from "../api/errors.js";
import { apiKeyProblem } from "../api/key-check.js";
import { isLoopbackHost, maskUserinfo } from "../api/url-guard.js";
import { UserError } from "../model/errors.js";
import { sameService } from "../model/service.js";
import { CONNECTION_SETTINGS, ENV } from "../model/settings-table.js";

export { envKey } from "../model/env-names.js";
import { pick, type Picked, type Sources } from "./sources.js";

const KEY_ENV = ENV.apiKey;

/** Every API key this process resolved: scrubbed from logs and from the last-resort error line (src/cli/index.ts). */
const resolvedKeys = new Set<string>();
export function runSecrets(): string[] {
  return [...resolvedKeys];
}

/**
 * The API key and where it came from: the key variable, else the variable the profile's api_key_env names. Never a
 * flag, never the file. A profile's key goes only to the profile's own base_url: a URL from --base-url or its
 * variable that the profile did not name needs its key in the key variable.
 */
export function apiKeyOf(
  src: Sources,
  base: Picked | undefined,
  baseUrl: string,
): { apiKey: string; keySource: string } {
  const fromEnv = src.env[KEY_ENV];
  if (fromEnv) return remembered({ apiKey: fromEnv, keySource: `the API key in ${KEY_ENV}` });
  const profile = src.profile;
  const keyEnv = profile?.values.api_key_env;
  if (profile === undefined || keyEnv === undefined || keyEnv === KEY_ENV) {
    throw new UserError(
      `no API key: set ${KEY_ENV} (it is never taken as a flag or from a file, so it stays out of shell history and CI logs)`,
    );
  }
  const own = profile.values.base_url;
  if (base?.kind !== "profile" && (own === undefined || !sameService(own, baseUrl))) {
    const named = own === undefined ? "names no base_url" : `names ${maskUserinfo(own)}`;
    throw new UserError(
      `${base?.from ?? "--base-url"} ${baseUrl}: profile ${profile.name} ${named}, and its key (${keyEnv}, its api_key_env) goes to no other service; set ${KEY_ENV} to the key for ${baseUrl}`,
    );
  }
  const apiKey = src.env[keyEnv];
  if (!apiKey) {
    throw new UserError(
      `no API key: set ${keyEnv} (the api_key_env of profile ${profile.name}) or ${KEY_ENV} (it is never taken as a flag or from a file, so it stays out of shell history and CI logs)`,
    );
  }
  return remembered({ apiKey, keySource: `the API key in ${keyEnv} (profile ${profile.name}'s api_key_env)` });
}

function remembered<T extends { apiKey: string }>(k: T): T {
  resolvedKeys.add(k.apiKey);
  return k;
}

/**
 * The API key if one is set (the key variable, else the profile's api_key_env), for a verb that sends nothing and
 * may do without: `state show` checks a state's MAC with it.
 */
export function apiKeyFrom(src: Sources): string | undefined {
  const keyEnv = src.profile?.values.api_key_env;
  const key = src.env[KEY_ENV] || (keyEnv !== undefined ? src.env[keyEnv] : undefined);
  if (!key) return undefined;
  resolvedKeys.add(key);
  return key;
}

/** The service URL picked (flag, variable, profile), checked: http(s), and plain http only to loopback or with --insecure-http. */
export function baseUrlOf(src: Sources): { base: Picked | undefined; baseUrl: string } {
  const base = pick(CONNECTION_SETTINGS.baseUrl, src);
  const baseUrl = typeof base?.value === "string" ? base.value : undefined;
  if (!baseUrl) {
    throw new UserError(
      `no service URL: pass --base-url, set ${ENV.baseUrl} or choose a profile with a base_url (e.g. http://127.0.0.1:4010/api for \`flowrules sandbox\`)`,
    );
  }
  let url: URL;
  try {
    url = new URL(baseUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("protocol");
  } catch {
    throw new UserError(
      `${base?.from ?? "--base-url"} is not an http(s) URL: ${JSON.stringify(maskUserinfo(baseUrl))}`,
    );
  }
  // refused before any message could echo it: the key has its own variable, and a URL is shown in plans and logs
  if (url.username || url.password) {
    throw new UserError(
      `${base?.from ?? "--base-url"} ${maskUserinfo(baseUrl)}: a service URL must not carry a user name or password; the API key goes in ${KEY_ENV} or a profile's api_key_env`,
    );
  }
  // refused here, before any rule or plan file is read and long before a socket could open (the client checks too)
  if (src.opts.insecureHttp !== true && url.protocol === "http:" && !isLoopbackHost(url.hostname))
    throw new UserError(new InsecureUrlError(url.host, "--insecure-http").message);
  return { base, baseUrl };
}

/**
 * Where the API key comes from, in `flowrules config`'s words (the key variable's name, "profile 'staging' (api_key_env
 * STAGING_KEY)"), never its value; unset, or refused by a run's own rules (a profile's key asked for another URL, a
 * character a header cannot carry), in words.
 */
export function keyFromWords(src: Sources): { from: string; problem?: string } {
  const profile = src.profile;
  const keyEnv = profile?.values.api_key_env;
  const viaProfile = profile !== undefined && keyEnv !== undefined && keyEnv !== KEY_ENV && !src.env[KEY_ENV];
  if (!viaProfile) {
    const key = src.env[KEY_ENV];
    if (!key)
      return { from: `not set: set ${KEY_ENV}, or choose a profile whose api_key_env names the variable holding it` };
    const problem = apiKeyProblem(key, `the API key in ${KEY_ENV}`);
    return { from: KEY_ENV, ...(problem ? { problem } : {}) };
  }
  const from = `profile '${profile.name}' (api_key_env ${keyEnv})`;
  if (!src.env[keyEnv]) return { from: `not set: ${from} names ${keyEnv}, which is not set` };
  let url: { base: Picked | undefined; baseUrl: string };
  try {
    url = baseUrlOf(src);
  } catch {
    // the URL's own line says what is wrong with it
    return { from };
  }
  try {
    const { apiKey, keySource } = apiKeyOf(src, url.base, url.baseUrl);
    const problem = apiKeyProblem(apiKey, keySource);
    return { from, ...(problem ? { problem } : {}) };
  } catch (err) {
    if (err instanceof UserError) return { from, problem: err.message };
    throw err;
  }
}
