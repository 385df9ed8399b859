// The provider contract suite against the reference adapter (FakeProvider), with a scripted wrapper
// that loses one create answer or refuses one create on demand.
import type { CreateOutcome, CreateRequest, ProviderPort } from "@pair/provision";
import { ManualClock } from "@pair/provision";
import { FakeProvider, describeProviderContract } from "@pair/testkit";

function fakeHarness() {
  const clock = new ManualClock();
  const fake = new FakeProvider({ account: "acct", clock, startupMs: 2_000 });
  let next: "lose" | "refuse" | undefined;
  const port: ProviderPort = {
    capabilities: fake.capabilities,
    create(request: CreateRequest): Promise<CreateOutcome> {
      const fault = next;
      next = undefined;
      if (fault === "refuse")
        return Promise.resolve({
          kind: "refused",
          code: "capacity",
          message: "no capacity for this GPU type",
        });
      const made = fake.createNow(request);
      if (fault === "lose") return Promise.resolve({ kind: "lost", cause: "socket hang up" });
      return Promise.resolve({ kind: "created", report: fake.report(made) });
    },
    list: () => fake.list(),
    describe: (key) => fake.describe(key),
    stop: (key, mode) => fake.stop(key, mode),
    resume: (key) => fake.resume(key),
  };
  return {
    port,
    advance: (ms: number) => void clock.advance(ms),
    spec: (name: string) => ({ provider: "fake", account: "acct", name, model: "m", hardware: "NVIDIA L4" }),
    ownerTag: "pair:contract",
    loseNextCreateAnswer: () => void (next = "lose"),
    refuseNextCreate: () => void (next = "refuse"),
    close: () => undefined,
  };
}

describeProviderContract("FakeProvider", fakeHarness);
