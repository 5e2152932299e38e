/**
 * The Prometheus text exposition format (version 0.0.4) of `flowrules watch`'s counters and gauges (docs/watch.md):
 * one `# HELP` and `# TYPE` line per family, then one sample line per label set, every name `flowrules_`-prefixed.
 */

export type MetricType = "counter" | "gauge";

export interface MetricFamily {
  /** without the prefix: `cycles_total` → `flowrules_cycles_total` */
  name: string;
  help: string;
  type: MetricType;
  samples: Array<{ labels?: Record<string, string>; value: number }>;
}

export const METRIC_PREFIX = "flowrules_";

/** Content-Type of the text format. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Label values escape backslash, double quote and newline; HELP text backslash and newline. */
function escapeLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(v);
}

export function renderPrometheus(families: readonly MetricFamily[]): string {
  const out: string[] = [];
  for (const f of families) {
    const name = `${METRIC_PREFIX}${f.name}`;
    out.push(`# HELP ${name} ${escapeHelp(f.help)}`, `# TYPE ${name} ${f.type}`);
    for (const s of f.samples) {
      const labels = Object.entries(s.labels ?? {})
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => `${k}="${escapeLabel(v)}"`);
      out.push(`${name}${labels.length > 0 ? `{${labels.join(",")}}` : ""} ${formatValue(s.value)}`);
    }
  }
  return `${out.join("\n")}\n`;
}
