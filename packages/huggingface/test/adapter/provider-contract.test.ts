// The provider contract suite (the one FakeProvider and RunpodProvider pass) against
// HuggingFaceEndpointsProvider over the Hugging Face emulator, over HTTPS with the test CA, in
// virtual time. "No capacity" is a real quota refusal: the next spec asks for an instance type whose
// namespace quota is 0 (the emulator's reserved nvidia-h200 x8), which HF answers 400 "Quota exceeded".
import { describeProviderContract } from "@pair/testkit";
import { OWNER, deploymentSpec, startAdapterHarness } from "./adapter-harness.js";

describeProviderContract("HuggingFaceEndpointsProvider over the Hugging Face emulator", async () => {
  const h = await startAdapterHarness();
  let noQuotaNext = false;
  return {
    port: h.provider,
    advance: (ms) => h.emu.advance(ms),
    spec: (name) => {
      if (!noQuotaNext) return deploymentSpec(name);
      noQuotaNext = false;
      return deploymentSpec(name, { hardware: "nvidia-h200", settings: { instanceSize: "x8" } });
    },
    ownerTag: OWNER,
    loseNextCreateAnswer: () =>
      h.emu.faults.loseAnswers(1, { method: "POST", path: /^\/v2\/endpoint\/[^/]+$/ }),
    refuseNextCreate: () => {
      noQuotaNext = true;
    },
    close: () => h.close(),
  };
});
