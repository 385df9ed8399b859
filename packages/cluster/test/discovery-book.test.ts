// The sighting book decides, with times as inputs: who is listed as discovered, which address checks are due.
import { describe, expect, it } from "vitest";
import { SightingBook, type PinOf } from "../src/index.js";

const SELF = "selfselfselfselfself";
const B = "bbbbbbbbbbbbbbbbbbbb";
const C = "cccccccccccccccccccc";
const T0 = Date.UTC(2026, 0, 15, 12);
const limits = { recheckMs: 1_000, staleMs: { mdns: 10_000, static: 5_000 } };

/** B is paired, recorded at 10.0.0.2:14323; C is not. */
const pins: PinOf = (id) =>
  id === B ? { fingerprint: "f".repeat(64), address: "10.0.0.2:14323" } : undefined;

describe("SightingBook", () => {
  it("lists an unpaired node as discovered, a paired one not, and never itself", () => {
    const book = new SightingBook(SELF, limits);
    book.observe({ nodeId: C, name: "laptop", address: "10.0.0.3:14323", via: "mdns" }, T0);
    book.observe({ nodeId: B, name: "pc", address: "10.0.0.2:14323", via: "mdns" }, T0);
    book.observe({ nodeId: SELF, name: "me", address: "10.0.0.1:14323", via: "mdns" }, T0);
    book.observe({ nodeId: C, name: undefined, address: "10.0.0.3:14323", via: "static" }, T0 + 5);
    expect(book.discovered(T0 + 10, pins)).toEqual([
      {
        node_id: C,
        name: "laptop",
        address: "10.0.0.3:14323",
        seen_via: ["mdns", "static"],
        last_seen: new Date(T0 + 5).toISOString(),
      },
    ]);
  });

  it("a paired node at its recorded address calls for nothing; at another, for one check per recheckMs", () => {
    const book = new SightingBook(SELF, limits);
    book.observe({ nodeId: B, name: "pc", address: "10.0.0.2:14323", via: "mdns" }, T0);
    expect(book.plan(T0, pins)).toEqual([]);
    book.observe({ nodeId: B, name: "pc", address: "10.0.0.2:15000", via: "mdns" }, T0);
    const check = { nodeId: B, address: "10.0.0.2:15000", fingerprint: "f".repeat(64) };
    expect(book.plan(T0, pins)).toEqual([check]);
    book.observe({ nodeId: B, name: "pc", address: "10.0.0.2:15000", via: "mdns" }, T0 + 500);
    expect(book.plan(T0 + 999, pins)).toEqual([]);
    expect(book.plan(T0 + 1_000, pins)).toEqual([check]);
  });

  it("an unpaired node is never checked", () => {
    const book = new SightingBook(SELF, limits);
    book.observe({ nodeId: C, name: "x", address: "10.0.0.3:1", via: "mdns" }, T0);
    expect(book.plan(T0, pins)).toEqual([]);
  });

  it("stale sightings go (per source), goodbyes at once", () => {
    const book = new SightingBook(SELF, limits);
    book.observe({ nodeId: C, name: "x", address: "10.0.0.3:1", via: "static" }, T0);
    book.observe({ nodeId: C, name: "x", address: "10.0.0.3:1", via: "mdns" }, T0);
    expect(book.discovered(T0 + 5_000, pins).map((d) => d.seen_via)).toEqual([["mdns"]]);
    expect(book.discovered(T0 + 10_000, pins)).toEqual([]);
    book.observe({ nodeId: C, name: "x", address: "10.0.0.3:1", via: "mdns" }, T0);
    book.forget("mdns", { nodeId: C });
    expect(book.size).toBe(0);
  });

  it("a static address that stops answering forgets whatever was seen there", () => {
    const book = new SightingBook(SELF, limits);
    book.observe({ nodeId: C, name: "x", address: "10.0.0.3:1", via: "static" }, T0);
    book.observe({ nodeId: C, name: "x", address: "10.0.0.3:1", via: "mdns" }, T0);
    book.forget("static", { address: "10.0.0.3:1" });
    expect(book.discovered(T0, pins).map((d) => d.seen_via)).toEqual([["mdns"]]);
  });

  it("keeps at most maxEntries sightings, dropping the oldest", () => {
    const book = new SightingBook(SELF, { ...limits, maxEntries: 3 });
    for (let i = 0; i < 5; i += 1)
      book.observe({ nodeId: C, name: "x", address: `10.0.0.${i}:1`, via: "mdns" }, T0 + i);
    expect(book.discovered(T0 + 10, pins).map((d) => d.address)).toEqual([
      "10.0.0.4:1",
      "10.0.0.3:1",
      "10.0.0.2:1",
    ]);
  });

  it("a sighting with no node id (a static address, name only) is listed with node_id null", () => {
    const book = new SightingBook(SELF, limits);
    book.observe({ nodeId: null, name: "stranger", address: "10.0.0.9:1", via: "static" }, T0);
    expect(book.discovered(T0, pins)).toEqual([
      {
        node_id: null,
        name: "stranger",
        address: "10.0.0.9:1",
        seen_via: ["static"],
        last_seen: new Date(T0).toISOString(),
      },
    ]);
    expect(book.plan(T0, pins)).toEqual([]);
    // Hidden where a paired node is recorded (pairing told who is there).
    expect(book.discovered(T0, pins, (address) => address === "10.0.0.9:1")).toEqual([]);
    // A static answer replaces it (the address is forgotten, then observed again).
    book.forget("static", { address: "10.0.0.9:1" });
    expect(book.size).toBe(0);
  });

  it("a name-only sighting joins the row of an unpaired node seen with its id at that address", () => {
    const book = new SightingBook(SELF, limits);
    book.observe({ nodeId: C, name: "laptop", address: "10.0.0.3:14323", via: "mdns" }, T0);
    book.observe({ nodeId: null, name: "laptop", address: "10.0.0.3:14323", via: "static" }, T0 + 7);
    expect(book.discovered(T0 + 10, pins)).toEqual([
      {
        node_id: C,
        name: "laptop",
        address: "10.0.0.3:14323",
        seen_via: ["mdns", "static"],
        last_seen: new Date(T0 + 7).toISOString(),
      },
    ]);
  });

  it("refuses limits out of range", () => {
    expect(() => new SightingBook(SELF, { recheckMs: 0 })).toThrow(/recheckMs/);
  });
});
