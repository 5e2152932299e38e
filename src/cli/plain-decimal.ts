/** Number settings read from flags, the environment and profiles (src/cli/settings.ts). */
/**
 * A number setting written as plain decimal digits ("100", " 100 "), else NaN: JavaScript's Number() also reads
 * "0x10", "1e3", "0b101" and "" (as 0), which a limit in an environment variable must not quietly become.
 */
export function plainDecimal(text: string): number {
  const t = text.trim();
  return /^\d{1,15}$/.test(t) ? Number(t) : Number.NaN;
}
