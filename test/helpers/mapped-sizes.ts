/**
 * Runs a table's property with small mapped-buffer sizes (src/model/mapped-buffers.ts), drawn from the seed, so that
 * a table of a few thousand entries crosses every edge a million-instance table does: arrays below the size that
 * gets a mapped buffer, on one (widened over its memory as they grow), and past its end into a plain array again.
 */
import { setMappedSizes } from "../../src/model/mapped-buffers.js";
import { Prng } from "../../src/sandbox/prng.js";

export function smallMappedSizes(seed: number): { large: number; mapped: number } {
  const rnd = new Prng(seed * 7919 + 17);
  const large = rnd.int(1, 300);
  return { large, mapped: large + rnd.int(1, 6000) };
}

export function withSmallMappedBuffers<T>(seed: number, fn: () => T): T {
  const { large, mapped } = smallMappedSizes(seed);
  setMappedSizes(large, mapped);
  try {
    return fn();
  } finally {
    setMappedSizes();
  }
}

export async function withSmallMappedBuffersAsync<T>(seed: number, fn: () => Promise<T>): Promise<T> {
  const { large, mapped } = smallMappedSizes(seed);
  setMappedSizes(large, mapped);
  try {
    return await fn();
  } finally {
    setMappedSizes();
  }
}
