/**
 * The provider contract suite: the behaviours every `ProviderPort` must show, run against an adapter
 * over its emulator (or the FakeProvider, the reference adapter). One `describe` per adapter; each
 * case gets a fresh harness with virtual time. No case is skipped: where a capability is declared
 * absent (pauseResume), the case checks that the port behaves accordingly.
 * Must not know: any provider's wire format, emulator internals or how faults are injected (the
 * harness does that).
 */

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type {
  CreateOutcome,
  CreateRequest,
  DeploymentSpec,
  ProviderPort,
  ResourceKey,
  ResourceReport,
} from "@pair/provision";
import { sameResource, validateCapabilities } from "@pair/provision";

/** What a contract case needs from an adapter and its emulator. */
export interface ProviderHarness {
  readonly port: ProviderPort;
  /** Move the provider's (and the adapter's) virtual time forward. */
  advance(ms: number): void | Promise<void>;
  /** A valid spec for a new resource; `name` is unique within the case. */
  spec(name: string): DeploymentSpec;
  /** Our owner tag; the suite also creates resources under another tag (another owner's). */
  readonly ownerTag: string;
  /** The next create reaches the provider and creates the resource, but its answer is lost. */
  loseNextCreateAnswer(): void;
  /** The next create is refused for lack of capacity; nothing is created. */
  refuseNextCreate(): void;
  close(): void | Promise<void>;
}

export type MakeProviderHarness = () => ProviderHarness | Promise<ProviderHarness>;

/** How many listing polls a case waits (each after `maxListingLagMs`) before it calls a behaviour missing. */
const POLLS = 5;

export function describeProviderContract(label: string, makeHarness: MakeProviderHarness): void {
  describe(`provider contract: ${label}`, () => {
    let h: ProviderHarness;
    let requests = 0;

    beforeEach(async () => {
      h = await makeHarness();
      requests = 0;
    });
    afterEach(async () => {
      await h.close();
    });

    const request = (name: string, ownerTag = h.ownerTag, epoch = 1): CreateRequest => {
      requests += 1;
      return { spec: h.spec(name), requestId: `req-${label}-${requests}`, ownerTag, epoch };
    };
    const otherOwner = () => `${h.ownerTag}-someone-else`;
    const caps = () => h.port.capabilities;
    const lagMs = () => Math.max(1, caps().maxListingLagMs);
    const created = (outcome: CreateOutcome): ResourceReport => {
      if (outcome.kind !== "created")
        throw new Error(`expected a created outcome, got ${JSON.stringify(outcome)}`);
      return outcome.report;
    };
    const find = (resources: readonly ResourceReport[], key: ResourceKey) =>
      resources.find((r) => sameResource(r.key, key));
    const endsBilling = (status: string | undefined) =>
      status !== undefined && caps().billingEndedStatuses.includes(status);
    const charging = (status: string | undefined) =>
      status !== undefined &&
      !caps().billingEndedStatuses.includes(status) &&
      !caps().idleStatuses.includes(status);

    /** Poll the listing until `seen` holds, advancing virtual time by the declared lag between polls. */
    const listUntil = async (seen: (resources: readonly ResourceReport[]) => boolean) => {
      for (let i = 0; i < POLLS; i += 1) {
        const listing = await h.port.list();
        expect(listing.complete).toBe(true);
        if (seen(listing.resources)) return listing;
        await h.advance(lagMs());
      }
      return h.port.list();
    };

    it("declares valid capabilities", () => {
      expect(validateCapabilities(caps())).toEqual([]);
      expect(caps().billingEndedStatuses.length).toBeGreaterThan(0);
      expect(caps().pauseResume).toBe(typeof h.port.resume === "function");
    });

    it("creates a resource with an incarnation, and reads back owner tag, request id and epoch", async () => {
      const req = { ...request("create"), epoch: 7 };
      const report = created(await h.port.create(req));
      expect(report.key.provider).toBe(caps().provider);
      expect(report.key.name).toBe(req.spec.name);
      expect(report.key.incarnation.length).toBeGreaterThan(0);

      const listing = await listUntil((rs) => find(rs, report.key) !== undefined);
      const listed = find(listing.resources, report.key);
      expect(listed, "the new resource shows in a listing within maxListingLagMs").toBeDefined();
      expect(listed?.ownerTag).toBe(h.ownerTag);
      expect(listed?.requestId).toBe(req.requestId);
      expect(listed?.epoch).toBe(7);

      const described = await h.port.describe(report.key);
      expect(described.kind).toBe("found");
      if (described.kind !== "found") return;
      expect(described.report.key).toEqual(report.key);
      expect(described.report.ownerTag).toBe(h.ownerTag);
      expect(described.report.requestId).toBe(req.requestId);
      expect(described.report.epoch).toBe(7);
    });

    it("gives two creates of the same name two incarnations", async () => {
      const a = created(await h.port.create(request("twice")));
      let second = await h.port.create(request("twice"));
      if (second.kind === "refused") {
        // A provider whose names are unique while a resource lives (Hugging Face answers 409) frees
        // the name only when the first is gone: terminate it, then create the name again.
        expect((await h.port.stop(a.key, "terminate")).kind).toBe("accepted");
        await h.advance(lagMs());
        second = await h.port.create(request("twice"));
        expect((await h.port.describe(a.key)).kind, "the first incarnation is gone").toBe("not-found");
      }
      const b = created(second);
      expect(a.key.name).toBe(b.key.name);
      expect(sameResource(a.key, b.key)).toBe(false);
    });

    it("lists completely, others' resources included, and leaves them untouched", async () => {
      const theirs = created(await h.port.create(request("theirs", otherOwner())));
      const ours = created(await h.port.create(request("ours")));
      const listing = await listUntil(
        (rs) => find(rs, theirs.key) !== undefined && find(rs, ours.key) !== undefined,
      );
      expect(listing.complete).toBe(true);
      expect(Number.isFinite(listing.startedAtMs)).toBe(true);
      expect(find(listing.resources, theirs.key)?.ownerTag).toBe(otherOwner());

      expect((await h.port.stop(ours.key, caps().stopMode)).kind).toBe("accepted");
      await h.advance(lagMs() + caps().stopSettleMs);
      const after = await h.port.list();
      const stillTheirs = find(after.resources, theirs.key);
      expect(stillTheirs, "another owner's resource is still there").toBeDefined();
      expect(endsBilling(stillTheirs?.status)).toBe(false);
      expect(charging(stillTheirs?.status)).toBe(true);
    });

    it("describes a resource the provider never had as not-found", async () => {
      const real = created(await h.port.create(request("real")));
      const gone: ResourceKey = { ...real.key, incarnation: `${real.key.incarnation}-gone` };
      expect((await h.port.describe(gone)).kind).toBe("not-found");
    });

    it(`stops in the declared stop mode, then shows evidence (billing-ended status or absence)`, async () => {
      const report = created(await h.port.create(request("stop")));
      await listUntil((rs) => find(rs, report.key) !== undefined);
      const outcome = await h.port.stop(report.key, caps().stopMode);
      expect(outcome.kind).toBe("accepted");

      await h.advance(lagMs() + caps().stopSettleMs);
      const listing = await h.port.list();
      expect(listing.complete).toBe(true);
      const listed = find(listing.resources, report.key);
      expect(
        listed === undefined || endsBilling(listed.status),
        `after a stop, the listing shows ${listed?.status ?? "nothing"}`,
      ).toBe(true);
      const described = await h.port.describe(report.key);
      expect(
        described.kind === "not-found" ||
          (described.kind === "found" && endsBilling(described.report.status)),
        `after a stop, describe says ${JSON.stringify(described)}`,
      ).toBe(true);
    });

    it("answers `lost` to a create whose answer was lost, and the resource later lists with our request id", async () => {
      h.loseNextCreateAnswer();
      const req = request("lost");
      const outcome = await h.port.create(req);
      expect(outcome.kind).toBe("lost");
      const listing = await listUntil((rs) => rs.some((r) => r.requestId === req.requestId));
      const found = listing.resources.filter((r) => r.requestId === req.requestId);
      expect(found).toHaveLength(1);
      expect(found[0]?.ownerTag).toBe(h.ownerTag);
      expect(found[0]?.key.name).toBe(req.spec.name);
    });

    it("answers `refused` when there is no capacity, and creates nothing", async () => {
      h.refuseNextCreate();
      const req = request("refused");
      const outcome = await h.port.create(req);
      expect(outcome.kind).toBe("refused");
      if (outcome.kind === "refused") expect(outcome.code.length).toBeGreaterThan(0);
      await h.advance(lagMs());
      const listing = await h.port.list();
      expect(listing.resources.filter((r) => r.requestId === req.requestId)).toEqual([]);
    });

    it("resumes after a pause when it declares pauseResume; otherwise refuses a pause and offers no resume", async () => {
      const report = created(await h.port.create(request("pause")));
      if (!caps().pauseResume || h.port.resume === undefined) {
        expect("resume" in h.port && h.port.resume !== undefined).toBe(false);
        expect(caps().stopMode).toBe("terminate");
        const outcome = await h.port.stop(report.key, "pause");
        expect(outcome.kind, "a pause it cannot perform is refused, never accepted").toBe("refused");
        const described = await h.port.describe(report.key);
        if (described.kind === "found") expect(endsBilling(described.report.status)).toBe(false);
        return;
      }
      expect((await h.port.stop(report.key, "pause")).kind).toBe("accepted");
      await h.advance(lagMs() + caps().stopSettleMs);
      const paused = await h.port.describe(report.key);
      expect(paused.kind).toBe("found");
      if (paused.kind === "found") expect(endsBilling(paused.report.status)).toBe(true);
      expect((await h.port.resume(report.key)).kind).toBe("accepted");
      const resumed = await h.port.describe(report.key);
      expect(resumed.kind).toBe("found");
      if (resumed.kind === "found") {
        expect(resumed.report.key).toEqual(report.key);
        expect(endsBilling(resumed.report.status)).toBe(false);
      }
    });
  });
}
