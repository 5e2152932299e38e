/**
 * How to point flowrules at a running sandbox, in the words of the README's five-minute tour: the same profile, the
 * same variable, so the sandbox's banner, `npm run demo` and the tour never disagree. The profile sets the client's
 * rate limit to the sandbox's own (0, no limit, unless --rate-limit gave it one): the client's default, 100 a minute,
 * is a real service's limit and would slow a 5,000-instance plan of the sandbox from seconds to minutes.
 */

/** The lines to print (no trailing newline on each), indented by the caller. */
export function profileHint(baseUrl: string, rateLimitPerMin = 0): string[] {
  const why =
    rateLimitPerMin > 0
      ? `rate_limit ${rateLimitPerMin}: this sandbox answers 429 beyond ${rateLimitPerMin} requests a minute per key, so the client keeps under it`
      : "rate_limit 0: this sandbox limits nothing, so the client sends at full speed (its default, 100 a minute, is for real services)";
  return [
    "profiles:",
    `  sandbox: { base_url: "${baseUrl}", api_key_env: SANDBOX_KEY, rate_limit: ${rateLimitPerMin} }`,
    "export SANDBOX_KEY=sandbox-admin",
    `# ${why}`,
  ];
}
