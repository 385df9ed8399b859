// The managed rented node contract (managed-contract.ts) run against the three node kinds: a managed
// Hugging Face endpoint, a Hugging Face Jobs node and a Runpod pod node, each against its emulator
// over HTTPS with the real keyring. A node kind that breaks pause, resume, delete, close or its view's
// purity fails here whatever its own tests say.
import { isBilled, isBilledStage } from "@pair/emulators";
import { describeManagedNodeContract, type ContractWorld } from "./managed-contract.js";
import * as job from "./job-harness.js";
import * as hf from "./managed-harness.js";
import * as runpod from "./runpod-harness.js";

const MIN = 60_000;

describeManagedNodeContract("Hugging Face endpoint", {
  live: async (ca): Promise<ContractWorld> => {
    const w = await hf.managedWorld(ca, [], [], { endpoint: { running: true }, start: true });
    await w.advance(MIN);
    return {
      name: hf.NODE,
      node: () => w.node,
      managed: () => w.node.managed.node(hf.NODE)!,
      advance: (ms) => w.advance(ms),
      billing: () => {
        const e = w.hf.endpoints.get("alice", "qwen");
        return e !== undefined && isBilled(e.state);
      },
      cleanup: () => w.cleanup(),
    };
  },
});

describeManagedNodeContract("Hugging Face Jobs node", {
  live: async (ca): Promise<ContractWorld> => {
    const w = await job.jobWorld(ca);
    await job.startServed(w);
    return {
      name: job.NODE,
      node: () => w.node,
      managed: () => w.node.jobs.node(job.NODE)!,
      advance: (ms) => w.advance(ms),
      billing: () => w.hf.jobs.list(job.NS).some((j) => isBilledStage(j.stage)),
      cleanup: () => w.cleanup(),
    };
  },
});

describeManagedNodeContract("Runpod pod node", {
  live: async (ca): Promise<ContractWorld> => {
    const w = await runpod.runpodWorld(ca);
    await w.start();
    const served = await w.advanceUntil(runpod.chat(w, false), runpod.COLD_START_MS + MIN);
    if (served.status !== 200) throw new Error(`the pod did not serve: ${served.status} ${served.text}`);
    return {
      name: runpod.NODE,
      node: () => w.node,
      managed: () => w.node.runpod.node(runpod.NODE)!,
      advance: (ms) => w.advance(ms),
      billing: () =>
        w.emu.pods.list().some((p) => p.wire.status !== "TERMINATED" && p.wire.status !== "EXITED"),
      cleanup: () => w.cleanup(),
    };
  },
});
