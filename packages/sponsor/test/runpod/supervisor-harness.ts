// A RunpodPodSupervisor driven through a HostingController over a MemoryHostingStore, on the Runpod
// emulator (HTTPS, test CA, virtual time). `restart()` is a new process over the same store.
import { HostingController, MemoryHostingStore, openObligations, type HostingEvent } from "@pair/provision";
import { CountingIds } from "@pair/testkit";
import { HttpsVllmProbe, RedactedString, type RunpodModel } from "@pair/runpod";
import { RunpodPodSupervisor } from "../../src/runpod/pod-supervisor.js";
import {
  ACCOUNT,
  OWNER,
  VLLM_KEY,
  specOf,
  startWorld,
  type RunpodWorld,
} from "../../../runpod/test/adapter/runpod-harness.js";

export interface SupervisedWorld extends RunpodWorld {
  readonly store: MemoryHostingStore;
  controller: HostingController;
  supervisor: RunpodPodSupervisor;
  readonly events: HostingEvent[];
  /** Advance virtual time in steps, ticking after each, until `until()` or `ms` passed. */
  run(ms: number, until?: () => boolean, stepMs?: number): Promise<void>;
  /** A new process: a new controller and supervisor over the same store. */
  restart(): void;
  openObligationCount(): number;
}

export async function supervised(
  options: { model?: Partial<RunpodModel>; probeKey?: string } = {},
): Promise<SupervisedWorld> {
  const world = await startWorld();
  const store = new MemoryHostingStore();
  const events: HostingEvent[] = [];
  const probe = new HttpsVllmProbe({
    apiKey: new RedactedString(options.probeKey ?? VLLM_KEY, "vllm key"),
    extraCaPem: world.caPem,
  });
  let generation = 0;
  const make = () => {
    generation += 1;
    const controller = HostingController.open({
      controllerId: `controller-${generation}`,
      ownerTag: OWNER,
      account: ACCOUNT,
      provider: world.provider,
      store,
      clock: world.clock,
      ids: new CountingIds(`g${generation}-`),
      policy: { maxActiveResources: 10, maxLifetimeMs: 86_400_000 },
      leaseTtlMs: 60_000,
      busyRequeueMs: 5_000,
      idleRequeueMs: 30_000,
      stopRetryMs: 10_000,
      onEvent: (e) => events.push(e),
    });
    const supervisor = new RunpodPodSupervisor({
      controller,
      provider: world.provider,
      clock: world.clock,
      probe,
      specs: [specOf("pair-qwen", options.model ?? {})],
      authorize: () => ({ ledgerId: "ledger", reservationId: "res-1" }),
    });
    return { controller, supervisor };
  };
  const first = make();
  const sw: SupervisedWorld = {
    ...world,
    store,
    controller: first.controller,
    supervisor: first.supervisor,
    events,
    run: async (ms, until, stepMs = 5_000) => {
      await sw.supervisor.settled(); // a create's answer arrives before virtual time moves on
      for (let t = 0; t < ms; t += stepMs) {
        world.advance(stepMs);
        await sw.supervisor.tick();
        if (until?.() === true) return;
      }
    },
    restart: () => {
      world.clock.restartProcess();
      const next = make();
      sw.controller = next.controller;
      sw.supervisor = next.supervisor;
    },
    openObligationCount: () => openObligations(store.load()).length,
    close: async () => {
      await probe.close();
      await world.close();
    },
  };
  return sw;
}
