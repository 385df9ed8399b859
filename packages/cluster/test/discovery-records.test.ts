// What a node says on mDNS and how it reads others: strict, total, never thrown on (pure, no socket).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MDNS_SERVICE_NAME, mdnsAdvert, readMdnsResponse, readTxt } from "../src/index.js";

const ID = "abcdefghijklmnopqrst";
const FQDN = `pair-${ID}._pair._tcp.local`;
const from = { address: "192.168.1.20" };
const txt = (...items: string[]): Buffer[] => items.map((i) => Buffer.from(i));

const GOOD_TXT = txt(`id=${ID}`, "name=pc-3090", "v=1");

function packet(ttl: number, over: { txt?: unknown; port?: unknown } = {}) {
  const txtData = "txt" in over ? over.txt : GOOD_TXT;
  const port = "port" in over ? over.port : 14323;
  return {
    answers: [{ name: MDNS_SERVICE_NAME, type: "PTR", ttl: ttl === 0 ? 0 : 28800, data: FQDN }],
    additionals: [
      { name: FQDN, type: "SRV", ttl, data: { priority: 0, weight: 0, port, target: `pair-${ID}.local` } },
      { name: FQDN, type: "TXT", ttl, data: txtData },
      { name: `pair-${ID}.local`, type: "A", ttl, data: "10.9.9.9" },
    ],
  };
}

describe("the advertisement", () => {
  it("carries the node id, the name, the version and the cluster port: nothing else", () => {
    const advert = mdnsAdvert({ nodeId: ID, name: "pc-3090", port: 14323 });
    expect(advert).toEqual({
      name: `pair-${ID}`,
      type: "pair",
      protocol: "tcp",
      port: 14323,
      host: `pair-${ID}.local`,
      txt: { id: ID, name: "pc-3090", v: "1" },
      probe: false,
    });
  });
});

describe("reading responses", () => {
  it("a well-formed announcement is a sighting at the packet's source address (not its A records)", () => {
    expect(readMdnsResponse(packet(120), from)).toEqual({
      seen: [{ nodeId: ID, name: "pc-3090", host: "192.168.1.20", port: 14323 }],
      gone: [],
    });
  });

  it("TTL 0 is a goodbye, with the port when the SRV came along", () => {
    expect(readMdnsResponse(packet(0), from)).toEqual({
      seen: [],
      gone: [{ nodeId: ID, host: "192.168.1.20", port: 14323 }],
    });
  });

  it("a goodbye without TXT is named by its instance", () => {
    const p = packet(0);
    p.additionals = p.additionals.filter((rr) => rr.type !== "TXT");
    expect(readMdnsResponse(p, from).gone).toEqual([{ nodeId: ID, host: "192.168.1.20", port: 14323 }]);
  });

  it.each([
    ["no TXT", undefined],
    ["TXT not a list", "id=x"],
    ["wrong version", txt(`id=${ID}`, "name=a", "v=2")],
    ["no version", txt(`id=${ID}`, "name=a")],
    ["bad node id", txt("id=NOT-AN-ID", "name=a", "v=1")],
    ["short node id", txt("id=abc", "name=a", "v=1")],
    ["bad name", txt(`id=${ID}`, "name=<script>", "v=1")],
    ["empty name", txt(`id=${ID}`, "name=", "v=1")],
    ["long name", txt(`id=${ID}`, `name=${"a".repeat(64)}`, "v=1")],
    ["items not bytes", [1, 2, 3]],
  ])("a TXT with %s is ignored", (_why, data) => {
    expect(readMdnsResponse(packet(120, { txt: data }), from).seen).toEqual([]);
  });

  it.each([
    ["no port", undefined],
    ["port 0", 0],
    ["port too high", 70_000],
    ["port not a number", "14323"],
  ])("an SRV with %s is ignored", (_why, port) => {
    expect(readMdnsResponse(packet(120, { port }), from).seen).toEqual([]);
  });

  it("the first occurrence of a TXT key counts (RFC 6763), keys are case-insensitive, extra keys are fine", () => {
    expect(readTxt(txt(`ID=${ID}`, "id=zzzzzzzzzzzzzzzzzzzz", "name=a", "v=1", "future=x"))).toEqual({
      id: ID,
      name: "a",
    });
  });

  it("other services and junk are ignored", () => {
    expect(
      readMdnsResponse({ answers: [{ name: "_http._tcp.local", type: "PTR", ttl: 1, data: "x" }] }, from),
    ).toEqual({ seen: [], gone: [] });
    for (const junk of [null, 1, "x", [], { answers: "x" }, { answers: [null, 1, { name: 1 }] }])
      expect(readMdnsResponse(junk, from)).toEqual({ seen: [], gone: [] });
  });

  it("never throws on any packet (property)", () => {
    const rr = fc.record({
      name: fc.oneof(fc.constant(MDNS_SERVICE_NAME), fc.constant(FQDN), fc.string(), fc.anything()),
      type: fc.oneof(fc.constantFrom("PTR", "SRV", "TXT", "A"), fc.anything()),
      ttl: fc.oneof(fc.integer(), fc.double(), fc.anything()),
      data: fc.oneof(
        fc.constant(FQDN),
        fc.array(fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a))),
        fc.record({ port: fc.anything() }),
        fc.anything(),
      ),
    });
    fc.assert(
      fc.property(
        fc.array(rr, { maxLength: 20 }),
        fc.array(rr, { maxLength: 20 }),
        (answers, additionals) => {
          const report = readMdnsResponse({ answers, additionals }, from);
          for (const s of report.seen) expect(s.nodeId).toMatch(/^[a-z2-7]{20}$/);
        },
      ),
      { numRuns: 300 },
    );
  });
});
