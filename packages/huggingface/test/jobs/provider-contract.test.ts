// The provider contract suite (the one FakeProvider, RunpodProvider and the Endpoints adapter pass)
// against HuggingFaceJobsProvider over the Jobs emulator, over HTTPS with the test CA, in virtual
// time. "No capacity" is a real refusal: the next spec asks for the emulator's unavailable h200x8
// flavor, which it answers 400. Jobs cannot pause: the suite checks that a pause is refused.
import { describeProviderContract } from "@pair/testkit";
import { OWNER, jobSpec, startJobsHarness } from "./jobs-harness.js";

describeProviderContract("HuggingFaceJobsProvider over the Jobs emulator", async () => {
  const h = await startJobsHarness();
  let noCapacityNext = false;
  return {
    port: h.provider,
    advance: (ms) => h.emu.advance(ms),
    spec: (name) => {
      if (!noCapacityNext) return jobSpec(name);
      noCapacityNext = false;
      return jobSpec(name, { hardware: "h200x8" });
    },
    ownerTag: OWNER,
    loseNextCreateAnswer: () =>
      h.emu.jobs.faults.loseAnswers(1, { method: "POST", path: /^\/api\/jobs\/[^/]+$/ }),
    refuseNextCreate: () => {
      noCapacityNext = true;
    },
    close: () => h.close(),
  };
});
