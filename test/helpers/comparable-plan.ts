/**
 * A JSON plan printed by the CLI, made comparable with another run's: two CLI runs cannot share one moment (each
 * plans at its own clock's now), so the plan's own now, wherever it appears (templated `$now()` inputs), is put aside,
 * with the digest and the request count; instances are not near a moving bound in a second.
 */
interface PlanJson {
  created_at: string;
  summary: Record<string, unknown>;
  [k: string]: unknown;
}

export function comparable(stdout: string): unknown {
  const createdAt = (JSON.parse(stdout) as PlanJson).created_at;
  const {
    created_at: _c,
    digest: _d,
    summary,
    ...rest
  } = JSON.parse(stdout.split(createdAt).join("<now>")) as PlanJson & { digest?: string };
  const { requests: _r, ...counts } = summary;
  return { ...rest, summary: counts };
}
