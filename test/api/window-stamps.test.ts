/**
 * The rate limiter's window (src/api/window-stamps.ts) answers as the `Map<ticket, time>` it replaced, over random
 * sequences of new requests, answers (a ticket stamped again, also one already out of the window),
 * clocks that go back, and expiries, through growth and shrinking (many seeds).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WindowStamps } from "../../src/api/window-stamps.js";

type Op =
  { kind: "add"; dt: number } | { kind: "restamp"; pick: number; dt: number } | { kind: "expire"; back: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant("add" as const), dt: fc.integer({ min: -3, max: 20 }) }), weight: 5 },
  {
    arbitrary: fc.record({
      kind: fc.constant("restamp" as const),
      pick: fc.nat(),
      dt: fc.integer({ min: -3, max: 20 }),
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ kind: fc.constant("expire" as const), back: fc.integer({ min: 0, max: 400 }) }), weight: 2 },
);

describe("the rate limiter's window stamps", () => {
  it("answer as a Map of ticket to time (many seeds)", () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 600 }),
        fc.array(fc.record({ n: fc.integer({ min: 500, max: 3_000 }), back: fc.integer({ min: 0, max: 50 }) }), {
          maxLength: 2,
        }),
        (ops, bursts) => {
          const stamps = new WindowStamps();
          const model = new Map<number, number>();
          let granted = 0;
          let now = 1_000;
          const check = (): void => {
            expect(stamps.size).toBe(model.size);
            expect(stamps.values()).toEqual([...model.values()]);
          };
          const run = (o: Op): void => {
            if (o.kind === "add") {
              now += o.dt;
              granted++;
              stamps.add(granted, now);
              model.set(granted, now);
            } else if (o.kind === "restamp") {
              now += o.dt;
              // a ticket granted already (the limiter stamps no other): in the window, or out of it
              if (granted === 0) return;
              const ticket = 1 + (o.pick % granted);
              stamps.restamp(ticket, now);
              model.delete(ticket);
              model.set(ticket, now);
            } else {
              const from = now - o.back;
              stamps.expire(from);
              for (const [ticket, at] of model) {
                if (at > from) break;
                model.delete(ticket);
              }
            }
          };
          for (const o of ops) {
            run(o);
            check();
          }
          // a burst (the ring grows), answered, then mostly out of the window (it shrinks)
          for (const b of bursts) {
            for (let k = 0; k < b.n; k++) run({ kind: "add", dt: 1 });
            for (let k = 0; k < b.n; k += 3) run({ kind: "restamp", pick: granted - 1 - k + granted, dt: 0 });
            check();
            run({ kind: "expire", back: b.back });
            check();
          }
        },
      ),
      { numRuns: 200, seed: 46 },
    );
  });
});
