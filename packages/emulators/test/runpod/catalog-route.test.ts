// `GET /v2/catalog/gpus`: prices (USD per GPU-hour) and maxCount from the emulator's table, free GPUs
// with include=AVAILABILITY, an injected failure while the fault is on, and the bearer check.
import { afterEach, describe, expect, it } from "vitest";
import { startRunpodEmulator, type RunpodEmulator } from "../../src/index.js";

const KEY = "rp_test_key_0002";
const open: RunpodEmulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((emu) => emu.close()));
});

async function emulator(): Promise<RunpodEmulator> {
  const emu = await startRunpodEmulator({
    apiKey: KEY,
    gpuTypes: [
      { id: "NVIDIA RTX A4000", securePriceUsdPerHr: 0.25, communityPriceUsdPerHr: 0.17, capacityGpus: 3 },
      { id: "NVIDIA L40S", securePriceUsdPerHr: 0.79, maxCountPerPod: 4 },
    ],
  });
  open.push(emu);
  return emu;
}

function catalog(emu: RunpodEmulator, query = "", key = KEY): Promise<Response> {
  return fetch(`${emu.apiBaseUrl}/v2/catalog/gpus${query}`, { headers: { authorization: `Bearer ${key}` } });
}

describe("GET /v2/catalog/gpus", () => {
  it("answers each GPU type's secure and community price and maxCount", async () => {
    const emu = await emulator();
    const res = await catalog(emu);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      gpus: [
        {
          id: "NVIDIA RTX A4000",
          displayName: "NVIDIA RTX A4000",
          maxCount: 8,
          price: { secure: 0.25, community: 0.17 },
        },
        {
          id: "NVIDIA L40S",
          displayName: "NVIDIA L40S",
          maxCount: 4,
          price: { secure: 0.79, community: 0.79 },
        },
      ],
    });
  });

  it("adds the free GPUs with include=AVAILABILITY", async () => {
    const emu = await emulator();
    emu.faults.setCapacity("NVIDIA L40S", 0);
    const body = (await (await catalog(emu, "?include=AVAILABILITY&product=POD")).json()) as {
      gpus: { id: string; availability: { free: number } }[];
    };
    expect(body.gpus.map((g) => [g.id, g.availability.free])).toEqual([
      ["NVIDIA RTX A4000", 3],
      ["NVIDIA L40S", 0],
    ]);
  });

  it("fails while the fault is on, answers again once it is off; refuses a wrong key", async () => {
    const emu = await emulator();
    emu.faults.failCatalog();
    const failed = await catalog(emu);
    expect(failed.status).toBe(503);
    expect(failed.headers.get("content-type")).toBe("application/problem+json");
    emu.faults.failCatalog(false);
    expect((await catalog(emu)).status).toBe(200);
    expect((await catalog(emu, "", "rp_wrong_key_0000")).status).toBe(401);
  });
});
