// A tiny driver over decide() for unit tests, and a controller over FakeProvider for shell tests.
import {
  EMPTY_STATE,
  HostingController,
  ManualClock,
  MemoryHostingStore,
  decide,
  type ControllerOptions,
  type Decision,
  type HostingEvent,
  type HostingState,
  type Input,
  type LeaseClaim,
  type ProviderCapabilities,
  type ProviderPort,
  type Refusal,
  type Result,
} from "@pair/provision";
import { CountingIds, FakeProvider } from "@pair/testkit";
import { AUTH, CAPS, OWNER, POLICY, SPEC, at } from "./fixtures.js";

export class Driver {
  state: HostingState = EMPTY_STATE;
  events: HostingEvent[] = [];
  last: Decision | undefined;

  try(input: Input): Result<Decision, Refusal> {
    const result = decide(this.state, input);
    if (result.ok) {
      this.state = result.value.state;
      this.events.push(...result.value.events);
      this.last = result.value;
    }
    return result;
  }

  must(input: Input): Decision {
    const result = this.try(input);
    if (!result.ok) throw new Error(`refused ${input.type}: ${JSON.stringify(result.error)}`);
    return result.value;
  }

  declare(id = "d1", caps = CAPS, t = 0): void {
    this.must({
      type: "Declare",
      id,
      spec: SPEC,
      ownerTag: OWNER,
      capabilities: caps,
      authorization: AUTH,
      policy: POLICY,
      at: at(t),
    });
  }

  lease(id = "d1", t = 0, controllerId = "c1"): LeaseClaim {
    const d = this.must({ type: "AcquireLease", id, controllerId, ttlMs: 60_000, at: at(t) });
    const held = d.state.deployments[id]?.lease;
    if (held === undefined) throw new Error("no lease granted");
    return { controllerId: held.controllerId, epoch: held.epoch };
  }

  /** Declared → create sent → answered with incarnation `inc-1`, status STARTING. */
  created(id = "d1", status = "STARTING"): LeaseClaim {
    this.declare(id);
    const lease = this.lease(id);
    this.must({ type: "BeginCreate", id, lease, requestId: `req-${id}`, at: at(1) });
    this.must({
      type: "CreateAnswered",
      id,
      lease,
      outcome: {
        kind: "created",
        report: { key: keyOf(id), status, ownerTag: OWNER, requestId: `req-${id}` },
      },
      at: at(2),
    });
    return lease;
  }

  phase(id = "d1"): string | undefined {
    return this.state.deployments[id]?.phase;
  }

  obligation(id = "d1") {
    return this.state.obligations[id];
  }
}

export function keyOf(id: string, incarnation = `inc-${id}`) {
  return { provider: "fake", account: "acct", name: SPEC.name, incarnation };
}

/** A controller over a FakeProvider (optionally wrapped) and a memory store, with its events kept. */
export function controllerWorld(
  overrides: Partial<ControllerOptions> = {},
  fakeCaps: Partial<ProviderCapabilities> = {},
  wrap?: (fake: FakeProvider) => ProviderPort,
) {
  const clock = new ManualClock();
  const fake = new FakeProvider({ account: "acct", clock, capabilities: fakeCaps });
  const store = new MemoryHostingStore();
  const events: HostingEvent[] = [];
  const options: ControllerOptions = {
    controllerId: "c1",
    ownerTag: OWNER,
    account: "acct",
    provider: wrap?.(fake) ?? fake,
    store,
    clock,
    ids: new CountingIds(),
    policy: POLICY,
    leaseTtlMs: 30_000,
    busyRequeueMs: 1_000,
    idleRequeueMs: 60_000,
    stopRetryMs: 5_000,
    onEvent: (e) => events.push(e),
    ...overrides,
  };
  return { clock, fake, store, events, options, c: HostingController.open(options) };
}
