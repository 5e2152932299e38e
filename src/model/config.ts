/**
 * `flowrules.config.yaml` (docs/operating.md, Profiles): named profiles, one per service or tenant. The zod schema
 * below checks the file and is also written out as schemas/flowrules.config.schema.json (`npm run schema`) for
 * editor completion, so the two cannot disagree.
 */
import { z } from "zod";
import { ENV, profileDocs, type ProfileKey } from "./settings-table.js";

/** An environment variable's name as POSIX shells accept it. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Keys that would hold a secret: refused with their own message, since the key never lives in the file. */
export const SECRET_KEYS = ["api_key", "apikey", "api-key", "key", "token", "secret", "password"] as const;

/**
 * Variables every shell or CI runner sets to something that is no secret: naming one as `api_key_env` would send its
 * value (a PATH, a home folder) to the service as the key, so it is refused where it is written (docs/safety.md).
 * flowrules' own settings variables are here too: none of them holds a key.
 */
export const NOT_SECRET_VARIABLES: ReadonlySet<string> = new Set([
  "PATH",
  "HOME",
  "USER",
  "USERNAME",
  "LOGNAME",
  "SHELL",
  "PWD",
  "OLDPWD",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_CTYPE",
  "LC_MESSAGES",
  "TERM",
  "COLORTERM",
  "TMPDIR",
  "TEMP",
  "TMP",
  "HOSTNAME",
  "HOST",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "DISPLAY",
  "TZ",
  "MAIL",
  "SHLVL",
  "PS1",
  "COLUMNS",
  "LINES",
  "NODE_ENV",
  "NODE_OPTIONS",
  "CI",
  "NO_COLOR",
  "XDG_CONFIG_HOME",
  "XDG_RUNTIME_DIR",
  "XDG_DATA_HOME",
  "XDG_CACHE_HOME",
  "SSH_AUTH_SOCK",
  "GITHUB_WORKSPACE",
  "GITHUB_REPOSITORY",
  "GITHUB_SHA",
  "GITHUB_REF",
  ...Object.values(ENV).filter((name) => name !== ENV.apiKey),
]);

/** Prefixes of well-known key formats (GitHub, GitLab, Slack, Stripe, AWS, Google, OpenAI). */
const KEY_PREFIX =
  /^(gh[oprsu]_|github_pat_|glpat-|xox[abeprs]-|sk_(live|test)_|rk_(live|test)_|AKIA[0-9A-Z]{12}|AIza|sk-)/;

/**
 * Whether an `api_key_env` value looks like a key pasted in place of a variable's name: a known key prefix, or a
 * long run of letters and digits no one names a variable with (lower and upper case and digits mixed, or many
 * digits). Such a value is refused without being shown: it would otherwise be echoed in "no API key: set …".
 */
export function keyShaped(v: string): boolean {
  if (KEY_PREFIX.test(v)) return true;
  if (v.length < 20) return false;
  const digits = (v.match(/[0-9]/g) ?? []).length;
  return (/[a-z]/.test(v) && /[A-Z]/.test(v) && digits > 0) || digits >= v.length / 4;
}

/** The schema line of a profile key: the `docs` of its setting in src/model/settings-table.ts. */
const docs = (key: ProfileKey): { description: string } => ({ description: profileDocs(key) });

/** The profile keys: one per setting of the table that has one (the compiler asks for each). */
const PROFILE_FIELDS = {
  base_url: z.string().min(1).meta(docs("base_url")),
  rate_limit: z.number().int().min(0).meta(docs("rate_limit")),
  api_key_env: z
    .string()
    .refine(
      (v) => !keyShaped(v),
      "looks like an API key itself, not a variable's name (it is not shown): keep the key in an environment variable and name that variable here",
    )
    .regex(ENV_NAME, "must be an environment variable's name (letters, digits, _)")
    .refine((v) => !NOT_SECRET_VARIABLES.has(v.toUpperCase()), {
      error: (i) =>
        `${String(i.input)} holds no secret (every shell sets it): name the variable that holds this tenant's API key`,
    })
    .meta(docs("api_key_env")),
  workflows: z.string().min(1).meta(docs("workflows")),
  notify: z.union([z.string().min(1), z.array(z.string().min(1))]).meta(docs("notify")),
  opt_out_tag: z.string().meta(docs("opt_out_tag")),
  state: z.string().min(1).meta(docs("state")),
} satisfies Record<ProfileKey, z.ZodType>;

const ProfileSchema = z.strictObject(PROFILE_FIELDS).partial();
export type Profile = z.infer<typeof ProfileSchema>;
/** The keys a profile may have, for "unknown key" messages. */
export const PROFILE_KEYS = Object.keys(ProfileSchema.shape);

const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export const ConfigFileSchema = z.strictObject({
  default_profile: z
    .string()
    .regex(PROFILE_NAME)
    .optional()
    .meta({ description: `the profile used when neither --profile nor ${ENV.profile} names one` }),
  profiles: z
    .record(z.string().regex(PROFILE_NAME, "a profile name is letters, digits, '.', '_' or '-'"), ProfileSchema)
    .meta({ description: `one entry per service or tenant, chosen with --profile NAME or ${ENV.profile}` }),
});

/** The keys at the top of the file. */
export const CONFIG_KEYS = Object.keys(ConfigFileSchema.shape);

/** The JSON Schema committed as schemas/flowrules.config.schema.json (stable text: a test compares it). */
export function buildConfigJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(ConfigFileSchema);
  return {
    $schema,
    $id: "https://flowrules.dev/schemas/flowrules.config.schema.json",
    title: "flowrules.config.yaml",
    description:
      "Profiles of flowrules (docs/operating.md, Profiles). The API key never lives here: api_key_env names its variable.",
    ...rest,
  };
}
