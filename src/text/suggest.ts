/** "did you mean" for typos: the closest candidate, when it is close enough to be a plausible intent. */
import { distance } from "fastest-levenshtein";

export function closest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = distance(w, c.toLowerCase());
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  if (best === undefined) return undefined;
  const limit = Math.max(1, Math.floor(Math.max(w.length, best.length) / 3));
  if (bestD <= limit) return best;
  // a truncated or extended name ("complete" for a kind named "complete_<something>") is a typo of another kind
  const prefix = candidates.find(
    (c) => w.length >= 3 && (c.toLowerCase().startsWith(w) || w.startsWith(c.toLowerCase())),
  );
  return prefix;
}

export function didYouMean(word: string, candidates: readonly string[]): string {
  const c = closest(word, candidates);
  return c !== undefined && c !== word ? `; did you mean "${c}"?` : "";
}
