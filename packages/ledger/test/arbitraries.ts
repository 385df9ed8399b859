// Generators for the ledger simulation: scenarios of rented nodes with random caps, prices, zones and
// billing granules, and random steps of operations separated by random time.
import fc from "fast-check";
import type { Budget } from "@pair/ledger";
import { DAY, HOUR } from "./fixtures.js";
import type { Op, Scenario, Step } from "./simulation.js";

const zones = fc.constantFrom("UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata");
/** Caps small enough that prices from $0.10 to $6/hr reach them within minutes to hours. */
const cap = fc.option(fc.integer({ min: 0, max: 3_000_000 }), { nil: undefined, freq: 4 });
/** Token caps a handful of requests can reach (one request holds up to ~0.5 $). */
const tokenCap = fc.option(fc.integer({ min: 0, max: 1_500_000 }), { nil: undefined, freq: 5 });
const price = fc.integer({ min: 100_000, max: 6_000_000 });

export function budget(timeZone: string, day: number | undefined, month: number | undefined): Budget {
  return {
    ...(day === undefined ? {} : { budgetMicroUsdPerDay: day }),
    ...(month === undefined ? {} : { budgetMicroUsdPerMonth: month }),
    timeZone,
    stopLeadMs: 0,
  };
}

const node = fc.nat(3);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant("start" as const), node }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant("observe" as const), node, charging: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("user-stop" as const), node }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("orphan" as const), node }) },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant("price" as const), node, priceMicroUsdPerHour: price }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant("request" as const),
      inputTokens: fc.integer({ min: 0, max: 200_000 }),
      outputTokens: fc.integer({ min: 0, max: 400_000 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("hourly-request" as const), node }) },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant("settle" as const),
      pick: fc.nat(),
      usagePercent: fc.integer({ min: 0, max: 200 }),
      reported: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("release" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ t: "restart" as const }) },
);

const step: fc.Arbitrary<Step> = fc.record({
  dtMs: fc.oneof(
    { weight: 5, arbitrary: fc.integer({ min: 0, max: 90_000 }) },
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 3 * HOUR }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 * DAY }) },
    { weight: 2, arbitrary: fc.constant(0) },
  ),
  op,
});

export const scenario: fc.Arbitrary<Scenario> = zones.chain((timeZone) =>
  fc.record({
    timeZone: fc.constant(timeZone),
    hourly: fc.array(
      fc.record({ day: cap, month: cap, priceMicroUsdPerHour: price, perSecond: fc.boolean() }).map((h) => ({
        budget: budget(timeZone, h.day, h.month),
        priceMicroUsdPerHour: h.priceMicroUsdPerHour,
        perSecond: h.perSecond,
      })),
      { minLength: 1, maxLength: 3 },
    ),
    tokenBudget: fc.tuple(tokenCap, tokenCap).map(([d, m]) => budget(timeZone, d, m)),
    latencyFraction: fc.double({ min: 0, max: 0.99, noNaN: true }),
    steps: fc.array(step, { minLength: 10, maxLength: 80 }),
  }),
);
