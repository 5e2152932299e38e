/**
 * Where the compact tables' large typed arrays get their memory (docs/performance.md, "Memory the allocator keeps").
 * An array buffer comes from the C allocator (glibc's malloc on Linux). glibc serves a large block from a mapping of
 * its own and unmaps it when freed, but each such free raises the size from which it maps (up to 32 MB): after a
 * table's old copy is freed, the next copies under that size come from the heap, and freeing those later does not
 * give the memory back, so the V8 heap that grows at the end of a run cannot use it. A buffer of 32 MB is always
 * mapped and always unmapped when freed, and the system backs only the pages written: so an array from `LARGE`
 * bytes on gets a buffer of `MAPPED` bytes of which it uses the start, grows by widening its view over the same
 * memory (no copy, no free), and gives all of it back when it goes. Such a buffer counts as its whole size in
 * `process.memoryUsage().arrayBuffers`, but only its written pages are in the process's memory (RSS).
 */

export type Column = Float64Array | Uint32Array | Int32Array | Uint16Array | Uint8Array;
export type ColumnOf<T extends Column> = new (n: number) => T;
interface ViewOf<T extends Column> {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): T;
  readonly BYTES_PER_ELEMENT: number;
}

/** glibc's largest mapping threshold on 64-bit systems (DEFAULT_MMAP_THRESHOLD_MAX): a block this large is mapped. */
const MAPPED_BYTES = 32 * 1024 * 1024;
/** From this many bytes on an array gets a mapped buffer of its own (below it, the heap's slack is small). */
const LARGE_BYTES = 256 * 1024;

let mapped = MAPPED_BYTES;
let large = LARGE_BYTES;

/**
 * Tests and the bench's index probe only: the sizes at which arrays get a mapped buffer and how large that buffer is, so that small tables cross
 * those edges (growth within a buffer, out of it into a plain array); no arguments: back to the defaults.
 */
export function setMappedSizes(largeBytes = LARGE_BYTES, mappedBytes = MAPPED_BYTES): void {
  large = largeBytes;
  mapped = mappedBytes;
}

/** Whether `a` sits at the start of a mapped buffer of its own (made here), which it may widen over. */
function onMapped(a: Column): boolean {
  return a.byteOffset === 0 && a.buffer.byteLength === mapped && a.buffer.byteLength > a.byteLength;
}

/** Room, in entries, of the memory `a` may use without a copy. */
export function capacity(a: Column): number {
  return onMapped(a) ? Math.floor(mapped / a.BYTES_PER_ELEMENT) : a.length;
}

/** A zeroed array of `n` entries of the same kind as `like` (or of `ctor`): large ones on a mapped buffer. */
export function column<T extends Column>(ctor: ColumnOf<T>, n: number): T {
  const view = ctor as unknown as ViewOf<T>;
  const bytes = n * view.BYTES_PER_ELEMENT;
  if (bytes < large || bytes >= mapped) return new ctor(n);
  return new view(new ArrayBuffer(mapped), 0, n);
}

/**
 * A copy of `a` as a column of `ctor` with `n` entries (at least `a.length`; large ones on a mapped buffer): how a
 * column grows out of its memory, is cut to size, or is made wide for a value its kind cannot hold.
 */
export function copiedAs<T extends Column>(ctor: ColumnOf<T>, a: Column, n = a.length): T {
  const next = column(ctor, n);
  next.set(a);
  return next;
}

/** `a` seen with `n` entries over the same memory (n within `capacity(a)`): what it held stays, no copy. */
export function widened<T extends Column>(a: T, n: number): T {
  if (n === a.length) return a;
  return new (a.constructor as ViewOf<T>)(a.buffer, 0, n);
}

/** A byte buffer (outside the V8 heap) of `n` bytes, not zeroed when small, large ones on a mapped buffer. */
export function byteBuffer(n: number): Buffer {
  if (n < large || n >= mapped) return Buffer.allocUnsafeSlow(n);
  return Buffer.from(new ArrayBuffer(mapped), 0, n);
}

/** `b` with `n` bytes over the same memory when it is a mapped one with that room, else undefined. */
export function widenedBytes(b: Buffer, n: number): Buffer | undefined {
  if (b.byteOffset !== 0 || b.buffer.byteLength !== mapped || n > mapped) return undefined;
  return Buffer.from(b.buffer, 0, n);
}
