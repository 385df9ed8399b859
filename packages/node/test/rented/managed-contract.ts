/**
 * The contract every managed rented node keeps (ManagedRentedNode), as `describeProviderContract`
 * states the adapters' one: what pause, resume, delete, status, view and close mean, whichever provider
 * runs the node. A kind gives a sponsor whose node bills (`live`), a way to move time with passes, and
 * what its provider says bills now; the suite asserts the rest through the node and the admin API.
 * Must not know: which provider runs the node, how its world is made.
 */

import { request } from "undici";
import { describe, expect, it } from "vitest";
import type { RunningNode } from "../../src/node.js";
import type { ManagedRentedNode } from "@pair/sponsor";
import { until } from "../support/eventually.js";
import { keyringWorlds } from "../support/keyring-worlds.js";
import type { TestCa } from "@pair/testkit";

/** One sponsor with one managed node, as the contract drives it. */
export interface ContractWorld {
  readonly name: string;
  readonly node: () => RunningNode;
  /** The managed node under test (its manager's, by name). */
  readonly managed: () => ManagedRentedNode;
  /** Move the provider's time by `ms`, with the manager's passes. */
  readonly advance: (ms: number) => Promise<void>;
  /** Whether the provider has a resource of this node that bills now (running, starting, …). */
  readonly billing: () => boolean;
  readonly cleanup: () => Promise<void>;
}

export interface ContractKind {
  /** A started sponsor whose node bills (a live resource with its stop obligation open). */
  live(ca: TestCa): Promise<ContractWorld>;
}

const MIN = 60_000;

async function rentedRow(w: ContractWorld): Promise<Record<string, unknown>> {
  const node = w.node();
  const res = await request(`${node.url}/pair/v1/rented`, {
    headers: { authorization: `Bearer ${node.adminToken}` },
  });
  const rows = (await res.body.json()) as Record<string, unknown>[];
  const row = rows.find((r) => r["name"] === w.name);
  if (row === undefined) throw new Error(`no row for ${w.name} in /pair/v1/rented`);
  return row;
}

export function describeManagedNodeContract(kindName: string, kind: ContractKind): void {
  describe(`managed rented node contract: ${kindName}`, () => {
    const worlds = keyringWorlds<ContractWorld>();
    const live = async () => {
      const w = worlds.add(await kind.live(worlds.ca));
      expect(w.billing()).toBe(true);
      expect(w.managed().view()).toMatchObject({ managed: true, paused_by: null, open_obligations: 1 });
      return w;
    };

    it("pause stops what bills, closes the obligation on evidence and holds until resume", async () => {
      const w = await live();
      const n = w.managed();
      expect(await n.pause()).toEqual({ ok: true });
      await w.advance(MIN);
      expect(w.billing()).toBe(false);
      expect(n.view()).toMatchObject({
        paused_by: "user-request",
        open_obligations: 0,
        budget_exceeded: false,
      });
      expect(n.budgetRefusal()).toBeUndefined();
      // The admin API shows it paused once the sponsor looks again (a probe, every 200 ms here).
      await until(async () => (await rentedRow(w))["state"] === "paused");
      // A pass does not undo a user's pause.
      await w.advance(MIN);
      expect(w.billing()).toBe(false);
      expect(n.view().paused_by).toBe("user-request");

      expect(await n.resume()).toEqual({ ok: true });
      const resumed = n.view();
      expect(resumed.paused_by).toBeNull();
      expect(resumed.resumed_at).not.toBeNull();
      await until(async () => (await rentedRow(w))["state"] !== "paused");
    });

    it("delete leaves nothing billing and no open obligation", async () => {
      const w = await live();
      const n = w.managed();
      expect(await n.delete()).toEqual({ ok: true });
      await w.advance(MIN);
      expect(w.billing()).toBe(false);
      expect(n.view().open_obligations).toBe(0);
    });

    it("close at sponsor exit stops what bills and reports no obligation left open", async () => {
      const w = await live();
      expect(await w.managed().close()).toBe(0);
      expect(w.billing()).toBe(false);
      expect(w.managed().view().open_obligations).toBe(0);
    });

    it("view and status are computed: reading them changes nothing, and the admin API shows the same", async () => {
      const w = await live();
      const n = w.managed();
      const status = n.status();
      expect(n.view()).toEqual(n.view());
      expect(n.status()).toEqual(status);
      const row = await rentedRow(w);
      expect(row["managed"]).toEqual(n.view());
      if (status !== undefined) expect(row).toMatchObject({ state: status.state, models: status.models });
      expect(row["eligible"]).toBe(true);
      expect(n.budgetRefusal()).toBeUndefined();
      expect(n.priceMicroUsdPerHour()).toBeGreaterThan(0);
      expect(n.view().usd_per_hour).toBe(Math.round(n.priceMicroUsdPerHour() ?? 0) / 1e6);
    });
  });
}
