/**
 * Waiting that a stop cuts short (a run's stop signal: src/cli/signals.ts). The timers are cleared on the stop, so a
 * stopping process is not kept alive by a wait it no longer needs.
 */

/** Calls `fn` once when `signal` is aborted (at once when it already is); returns the unsubscribe. */
export function whenAborted(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return () => undefined;
  }
  signal.addEventListener("abort", fn, { once: true });
  return () => signal.removeEventListener("abort", fn);
}

/** Resolves after `ms`, or at once when `signal` is aborted or `wake` is called. */
export function pauseUnless(
  ms: number,
  signal: AbortSignal | undefined,
  onWake?: (wake: () => void) => void,
): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((done) => {
    let off = (): void => undefined;
    const finish = (): void => {
      clearTimeout(timer);
      off();
      done();
    };
    const timer = setTimeout(finish, Math.max(0, ms));
    if (signal) off = whenAborted(signal, finish);
    onWake?.(finish);
  });
}
