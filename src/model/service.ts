/**
 * Which service a base URL names: the one answer to "is this the same service?" wherever a file keeps the base URL it
 * was made for (a saved plan, the workflow catalog, the watcher's bookmarks, the state dir) and wherever a profile's
 * key is kept for its own service. The scheme's and host's case, a default port and trailing slashes do not matter;
 * text that is no URL is only itself (its trailing slashes dropped).
 */
export function sameService(a: string, b: string): boolean {
  return serviceKey(a) === serviceKey(b);
}

function serviceKey(raw: string): string {
  try {
    const url = new URL(raw);
    // `host` is lower case and has no default port; a user name or password would be a different service's URL
    const user = url.username || url.password ? `${url.username}:${url.password}@` : "";
    return `${url.protocol}//${user}${url.host}${url.pathname.replace(/\/+$/, "")}${url.search}`;
  } catch {
    return raw.replace(/\/+$/, "");
  }
}
