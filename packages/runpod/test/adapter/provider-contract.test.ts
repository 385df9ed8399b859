// The provider contract suite (the one FakeProvider passes) against RunpodProvider over the Runpod
// emulator, over HTTPS with the test CA, in virtual time.
import { describeProviderContract } from "@pair/testkit";
import { MODEL, OWNER, specOf, startWorld } from "./runpod-harness.js";

describeProviderContract("RunpodProvider over the Runpod emulator", async () => {
  const world = await startWorld();
  const gpu = MODEL.gpuTypes[0] ?? "";
  return {
    port: world.provider,
    advance: (ms) => world.advance(ms),
    spec: (name) => specOf(`pair-${name}`),
    ownerTag: OWNER,
    loseNextCreateAnswer: () => world.emu.faults.loseCreateAnswers(1),
    refuseNextCreate: () => world.emu.faults.outOfCapacity(gpu),
    close: () => world.close(),
  };
});
