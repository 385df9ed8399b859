// Day and month windows in the sponsor's IANA time zone.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dayKey, dayWindow, isTimeZone, monthOfDayKey, monthWindow } from "@pair/ledger";
import { HOUR } from "./fixtures.js";

const iso = (ms: number) => new Date(ms).toISOString();

describe("budget windows in the sponsor's time zone", () => {
  it("a UTC day runs from midnight to midnight", () => {
    const w = dayWindow("UTC", Date.UTC(2026, 0, 14, 10));
    expect([iso(w.startMs), iso(w.endMs), w.key]).toEqual([
      "2026-01-14T00:00:00.000Z",
      "2026-01-15T00:00:00.000Z",
      "2026-01-14",
    ]);
  });

  it("a day starts at local midnight, not UTC midnight", () => {
    const ny = dayWindow("America/New_York", Date.UTC(2026, 0, 14, 3)); // 22:00 on the 13th in New York
    expect([iso(ny.startMs), iso(ny.endMs), ny.key]).toEqual([
      "2026-01-13T05:00:00.000Z",
      "2026-01-14T05:00:00.000Z",
      "2026-01-13",
    ]);
    const kolkata = dayWindow("Asia/Kolkata", Date.UTC(2026, 0, 14, 20)); // 01:30 on the 15th
    expect([iso(kolkata.startMs), kolkata.key]).toEqual(["2026-01-14T18:30:00.000Z", "2026-01-15"]);
  });

  it("a day is 23 or 25 hours across daylight-saving changes", () => {
    const spring = dayWindow("Europe/Berlin", Date.UTC(2026, 2, 29, 12));
    expect([iso(spring.startMs), (spring.endMs - spring.startMs) / HOUR]).toEqual([
      "2026-03-28T23:00:00.000Z",
      23,
    ]);
    const autumn = dayWindow("Europe/Berlin", Date.UTC(2026, 9, 25, 12));
    expect([iso(autumn.startMs), (autumn.endMs - autumn.startMs) / HOUR]).toEqual([
      "2026-10-24T22:00:00.000Z",
      25,
    ]);
  });

  it("a day whose midnight is skipped starts at the first instant with its date", () => {
    // Chile springs forward at 24:00: 2026-09-06 begins at 01:00 local (04:00 UTC).
    const w = dayWindow("America/Santiago", Date.UTC(2026, 8, 6, 12));
    expect([iso(w.startMs), iso(w.endMs), w.key]).toEqual([
      "2026-09-06T04:00:00.000Z",
      "2026-09-07T03:00:00.000Z",
      "2026-09-06",
    ]);
    expect(dayKey("America/Santiago", w.startMs - 1)).toBe("2026-09-05");
  });

  it("a month runs from local midnight on the 1st to the next 1st", () => {
    const w = monthWindow("Europe/Berlin", Date.UTC(2026, 1, 14));
    expect([iso(w.startMs), iso(w.endMs), w.key]).toEqual([
      "2026-01-31T23:00:00.000Z",
      "2026-02-28T23:00:00.000Z",
      "2026-02",
    ]);
    const december = monthWindow("UTC", Date.UTC(2026, 11, 31, 23));
    expect(iso(december.endMs)).toBe("2027-01-01T00:00:00.000Z");
    expect(monthOfDayKey("2026-02-28")).toBe("2026-02");
  });

  it("asked again for the same day, in turn with other zones and days, gives the same window", () => {
    const asks: [string, number][] = [
      ["Europe/Berlin", Date.UTC(2026, 2, 29, 12)],
      ["Europe/Berlin", Date.UTC(2026, 2, 29, 20)],
      ["America/New_York", Date.UTC(2026, 2, 29, 12)],
      ["Europe/Berlin", Date.UTC(2026, 2, 30, 1)],
      ["Europe/Berlin", Date.UTC(2026, 2, 29, 2)],
    ];
    const seen = asks.map(([zone, ms]) => ({ ...dayWindow(zone, ms) }));
    const again = asks.map(([zone, ms]) => ({ ...dayWindow(zone, ms) }));
    expect(again).toEqual(seen);
    expect(seen.map((w) => [w.key, (w.endMs - w.startMs) / HOUR])).toEqual([
      ["2026-03-29", 23],
      ["2026-03-29", 23],
      ["2026-03-29", 24],
      ["2026-03-30", 24],
      ["2026-03-29", 23],
    ]);
  });

  it("knows IANA zones and refuses anything else", () => {
    expect(isTimeZone("Europe/Berlin")).toBe(true);
    expect(isTimeZone("UTC")).toBe(true);
    expect(isTimeZone("Mars/Olympus_Mons")).toBe(false);
    expect(isTimeZone("")).toBe(false);
  });

  it("every instant lies in exactly one day and one month of its zone (property)", () => {
    const zones = [
      "UTC",
      "Europe/Berlin",
      "America/New_York",
      "America/Santiago",
      "Australia/Lord_Howe",
      "Asia/Kathmandu",
      "Pacific/Chatham",
      "America/St_Johns",
    ];
    const instant = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) });
    fc.assert(
      fc.property(fc.constantFrom(...zones), instant, (zone, ms) => {
        const day = dayWindow(zone, ms);
        expect(day.startMs).toBeLessThanOrEqual(ms);
        expect(ms).toBeLessThan(day.endMs);
        expect(dayKey(zone, day.startMs)).toBe(day.key);
        expect(dayKey(zone, day.endMs - 1)).toBe(day.key);
        expect(dayKey(zone, day.startMs - 1)).not.toBe(day.key);
        expect(dayKey(zone, day.endMs)).not.toBe(day.key);
        expect(day.endMs - day.startMs).toBeGreaterThanOrEqual(22 * HOUR);
        expect(day.endMs - day.startMs).toBeLessThanOrEqual(26 * HOUR);
        const month = monthWindow(zone, ms);
        expect(month.startMs).toBeLessThanOrEqual(day.startMs);
        expect(day.endMs).toBeLessThanOrEqual(month.endMs);
        expect(month.key).toBe(monthOfDayKey(day.key));
      }),
      { numRuns: 300 },
    );
  });
});
