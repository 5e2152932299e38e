/**
 * The rate limiter's requests in its window (./rate-limiter.ts): per request (its ticket) the time it counts from,
 * in the order they were stamped, as two typed arrays used as a queue, 16 bytes a request. It answers exactly as
 * the `Map<ticket, time>` it replaced (insertion order, a restamped ticket moved to the end, the oldest dropped
 * while they are out of the window: test/api/window-stamps.test.ts), which cost ~36 bytes a request: with no
 * client-side limit (`--rate-limit 0`) a run sends a request every millisecond or so, 60,000 in a minute's window,
 * 2–4 MB (docs/performance.md, "A million instances").
 */
export class WindowStamps {
  private tickets = new Float64Array(64);
  private times = new Float64Array(64);
  /** the oldest entry's slot, and entries from it (live or dropped), in a ring */
  private head = 0;
  private used = 0;
  private live = 0;

  /** requests in the window */
  get size(): number {
    return this.live;
  }

  /** Stamps a ticket that has none (a new request). */
  add(ticket: number, at: number): void {
    if (this.used === this.tickets.length) this.resize(this.tickets.length * 2);
    const slot = (this.head + this.used) % this.tickets.length;
    this.tickets[slot] = ticket;
    this.times[slot] = at;
    this.used++;
    this.live++;
  }

  /** Stamps a ticket again from `at` (its answer came back): its stamp, wherever it was, moves to the end. */
  restamp(ticket: number, at: number): void {
    // a ticket is restamped soon after it was stamped: looked for from the newest end
    const cap = this.tickets.length;
    for (let k = this.used - 1; k >= 0; k--) {
      const slot = (this.head + k) % cap;
      if (this.tickets[slot] !== ticket) continue;
      this.tickets[slot] = -1; // dropped: skipped by whoever meets it
      this.live--;
      break;
    }
    this.add(ticket, at);
  }

  /** Drops the stamps from the oldest while they are at or before `from` (the first later one stops it). */
  expire(from: number): void {
    const cap = this.tickets.length;
    while (this.used > 0) {
      const slot = this.head;
      if (this.tickets[slot] !== -1) {
        if ((this.times[slot] as number) > from) break;
        this.live--;
      }
      this.head = (slot + 1) % cap;
      this.used--;
    }
    if (this.used === 0) this.head = 0;
    // a burst's room is given back once most of it is out of the window
    if (cap > 1024 && this.live < cap / 8) this.resize(cap / 2);
  }

  /** The times of the stamps in the window, oldest stamped first. */
  values(): number[] {
    const out: number[] = [];
    const cap = this.tickets.length;
    for (let k = 0; k < this.used; k++) {
      const slot = (this.head + k) % cap;
      if (this.tickets[slot] !== -1) out.push(this.times[slot] as number);
    }
    return out;
  }

  /** Into arrays of `cap` slots, live stamps only, in order from slot 0. */
  private resize(cap: number): void {
    const tickets = new Float64Array(cap);
    const times = new Float64Array(cap);
    const old = this.tickets.length;
    let n = 0;
    for (let k = 0; k < this.used; k++) {
      const slot = (this.head + k) % old;
      if (this.tickets[slot] === -1) continue;
      tickets[n] = this.tickets[slot] as number;
      times[n] = this.times[slot] as number;
      n++;
    }
    this.tickets = tickets;
    this.times = times;
    this.head = 0;
    this.used = n;
  }
}
