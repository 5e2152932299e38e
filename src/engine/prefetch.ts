/** Pulls the next item of an async iterator while the caller works on the current one (one page of look-ahead). */
export async function* prefetch<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  let next = it.next();
  try {
    for (;;) {
      const current = await next;
      if (current.done) return;
      next = it.next();
      // a failure of the look-ahead surfaces when it is awaited, not as an unhandled rejection meanwhile
      next.catch(() => undefined);
      yield current.value;
    }
  } finally {
    await it.return?.();
  }
}
