/**
 * What `flowrules config` shows: the config file and profile in effect, and every setting a run would use with its
 * source (a flag, a variable, a profile with file:line:col, or the default). The API key appears only as the name of
 * its source; `--format json` prints this object as it is.
 */
export interface ConfigSetting {
  /** "base url", "api key", "rate limit", … */
  setting: string;
  /** the value in effect, as words; null for the API key (never shown) and for what is not set */
  value: string | null;
  /** "--rate-limit", the variable's name, "profile 'prod' (flowrules.config.yaml:7:17)", "default", "not set: …" */
  source: string;
  /** the run's own one-line refusal of this value, when it would refuse it */
  problem?: string;
}

export interface ConfigReport {
  config_file: { path: string | null; source: string };
  profile: { name: string; source: string } | null;
  settings: ConfigSetting[];
  /** with --check: whether the URL and the key work, in one line */
  check?: { ok: boolean; message: string };
}
