// The GPU catalogue read over HTTPS against the emulator: typed entries with prices; a 5xx is retried
// (bounded, through the injected sleep) and a retry that succeeds is invisible; a failure that lasts
// surfaces as RunpodApiError "server" after 1 + readRetries calls; a 401 is never retried; the wire
// parser takes a bare list, numeric strings, and skips entries it cannot use.
import { startRunpodEmulator, type RunpodEmulator } from "@pair/emulators";
import { createTestCa, type TestCa } from "@pair/testkit";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { HttpsRunpodTransport, RedactedString, RunpodApiError, parseGpuCatalog } from "../src/index.js";

const KEY = "rp_catalog_key_7";
let ca: TestCa;
let leaf: { certPem: string; keyPem: string };
beforeAll(async () => {
  ca = await createTestCa();
  leaf = await ca.issue();
});
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function setup(key = KEY) {
  const emu: RunpodEmulator = await startRunpodEmulator({
    apiKey: KEY,
    tls: { key: leaf.keyPem, cert: leaf.certPem },
  });
  closers.push(() => emu.close());
  const waits: number[] = [];
  const transport = new HttpsRunpodTransport({
    baseUrl: emu.apiBaseUrl,
    apiKey: new RedactedString(key, "runpod key"),
    extraCaPem: ca.certPem,
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  });
  closers.push(() => transport.close());
  return { emu, transport, waits };
}

describe("listGpuCatalog", () => {
  it("reads every GPU type with its secure and community price per GPU-hour", async () => {
    const { transport } = await setup();
    const entries = await transport.listGpuCatalog();
    expect(entries.find((e) => e.id === "NVIDIA RTX A4000")).toEqual({
      id: "NVIDIA RTX A4000",
      displayName: "RTX A4000",
      maxCount: 8,
      price: { secure: 0.25, community: 0.17 },
    });
    expect(entries.find((e) => e.id === "NVIDIA L40S")?.price.secure).toBe(0.79);
  });

  it("retries a 5xx (bounded) and then answers", async () => {
    const { emu, transport, waits } = await setup();
    emu.faults.failNextCalls(2, 503);
    expect((await transport.listGpuCatalog()).length).toBeGreaterThan(0);
    expect(waits).toEqual([250, 500]);
  });

  it("a lasting failure surfaces after 1 + readRetries calls as a typed error", async () => {
    const { emu, transport, waits } = await setup();
    emu.faults.failCatalog(true, 502);
    const error = await transport.listGpuCatalog().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunpodApiError);
    expect(error).toMatchObject({ kind: "server", operation: "listGpuCatalog", status: 502 });
    expect(waits).toHaveLength(2);
  });

  it("never retries an unauthorized read, and the key is not in the error", async () => {
    const { transport, waits } = await setup("rp_wrong_key_99");
    const error = (await transport.listGpuCatalog().catch((e: unknown) => e)) as RunpodApiError;
    expect(error.kind).toBe("unauthorized");
    expect(waits).toEqual([]);
    expect(String(error.message)).not.toContain("rp_wrong_key_99");
  });
});

describe("parseGpuCatalog", () => {
  it("takes a bare list and numeric strings; unknown prices stay undefined, id-less entries are skipped", () => {
    expect(
      parseGpuCatalog([
        { id: "A", price: { secure: "0.5", community: null }, maxCount: 2 },
        { displayName: "no id" },
        { id: "B", price: { secure: 0 } },
      ]),
    ).toEqual([
      { id: "A", displayName: undefined, maxCount: 2, price: { secure: 0.5, community: undefined } },
      {
        id: "B",
        displayName: undefined,
        maxCount: undefined,
        price: { secure: undefined, community: undefined },
      },
    ]);
    expect(() => parseGpuCatalog({ pods: [] })).toThrow(/expected/);
  });
});
