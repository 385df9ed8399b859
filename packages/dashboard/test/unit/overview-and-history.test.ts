// The Nodes overview's sums (caps only where every billed node has one), the state history's folding
// of causeless bursts, and the names and reason badges users read.
import { describe, expect, it } from "vitest";
import { providerName, reasonBadgeText } from "../../src/format.js";
import { spendSummary } from "../../src/spend-summary.js";
import { foldStateHistory } from "../../src/state-folding.js";
import type { NodeRow, SponsoredNode, StateChange, Workload } from "../../src/wire.js";

function rented(name: string, state: string, usdPerHour: number | null, day: number, month: number): NodeRow {
  return {
    name,
    kind: "rented",
    label: "Rented · off-LAN",
    provider: "huggingface-endpoint",
    gpu: null,
    state,
    usd_per_hour: usdPerHour,
    usd_per_mtok: null,
    models: [],
    shared: true,
    sponsor: "a",
    policy: "when-no-local-node",
    eligible: true,
    reason: null,
    off_lan: true,
    spend_usd: { session: day, day, month },
  };
}

function caps(name: string, perDay: number | null, perMonth: number | null): SponsoredNode {
  return { name, budget: { usd_per_day: perDay, usd_per_month: perMonth } } as unknown as SponsoredNode;
}

const NOW = new Date(2026, 11, 2, 15, 0).getTime();

function work(at: Date, offLan: boolean): Workload {
  return { started_at: at.toISOString(), off_lan: offLan } as unknown as Workload;
}

describe("spendSummary", () => {
  it("adds the hourly price of the nodes that bill now, and sums spend against the caps", () => {
    const s = spendSummary(
      [rented("hf", "running", 0.8, 1.2, 10), rented("pod", "paused", 2, 0.5, 3)],
      [caps("hf", 5, 50), caps("pod", 2, 20)],
      [],
      NOW,
    );
    expect(s.usdPerHourNow).toBeCloseTo(0.8);
    expect(s.billingNow).toEqual(["hf"]);
    expect(s.today).toEqual({ usd: 1.7, capUsd: 7, uncapped: [] });
    expect(s.month.capUsd).toBe(70);
  });

  it("shows no cap for a period in which a billed node has none (a sum never looks safer)", () => {
    const s = spendSummary(
      [rented("hf", "running", 0.8, 1, 1), rented("peer-pod", "running", 1, 0.2, 0.2)],
      [caps("hf", 5, null)],
      undefined,
      NOW,
    );
    expect(s.today.capUsd).toBeNull();
    expect(s.today.uncapped).toEqual(["peer-pod"]);
    expect(s.month.uncapped).toEqual(["hf", "peer-pod"]);
  });

  it("counts today's requests and those that left the LAN, on the node's day", () => {
    const s = spendSummary(
      [],
      [],
      [
        work(new Date(2026, 11, 2, 9), true),
        work(new Date(2026, 11, 2, 10), false),
        work(new Date(2026, 11, 1, 23), true),
      ],
      NOW,
    );
    expect([s.offLanToday, s.requestsToday]).toEqual([1, 2]);
  });
});

function at(minute: number, second = 0): string {
  return new Date(Date.UTC(2026, 11, 2, 12, minute, second)).toISOString();
}

describe("foldStateHistory", () => {
  it("folds a burst of provider-side (or causeless) changes into one row, newest first", () => {
    const history: StateChange[] = [
      { at: at(0), state: "starting", reason: "provider-side change" },
      { at: at(0, 20), state: "running", reason: null },
      { at: at(0, 50), state: "paused", reason: "provider-side change: scaled down" },
      { at: at(1, 30), state: "running", reason: "provider-side change" },
      { at: at(30), state: "paused", reason: "idle for 15 min" },
    ];
    const rows = foldStateHistory(history);
    expect(rows).toHaveLength(2);
    expect(rows[0]).toEqual({ kind: "change", change: history[4] });
    expect(rows[1]).toMatchObject({ kind: "burst", states: ["starting", "running", "paused"] });
    if (rows[1]?.kind === "burst") expect(rows[1].changes).toHaveLength(4);
  });

  it("keeps a change with a cause on its own row, and short runs unfolded", () => {
    const history: StateChange[] = [
      { at: at(0), state: "running", reason: null },
      { at: at(0, 10), state: "paused", reason: "paused by its sponsor" },
      { at: at(0, 20), state: "running", reason: "woken by a request from laptop" },
      { at: at(0, 30), state: "paused", reason: null },
    ];
    expect(foldStateHistory(history).map((r) => r.kind)).toEqual(["change", "change", "change", "change"]);
  });

  it("does not fold changes more than a minute apart", () => {
    const history: StateChange[] = [0, 2, 4].map((m) => ({ at: at(m), state: "running", reason: null }));
    expect(foldStateHistory(history).every((r) => r.kind === "change")).toBe(true);
  });
});

describe("names", () => {
  it("reads providers as their products are called", () => {
    expect(providerName("huggingface-endpoint")).toBe("Hugging Face Inference Endpoint");
    expect(providerName("huggingface-job")).toBe("Hugging Face Job");
    expect(providerName("runpod")).toBe("Runpod pod");
    expect(providerName("openai-compatible")).toBe("OpenAI-compatible endpoint");
    expect(providerName("huggingface-providers")).toBe("Inference Providers");
    expect(providerName("something-new")).toBe("something-new");
  });

  it.each([
    [
      "public_endpoint_refused: it is public, and its sponsor manages only private endpoints",
      "public endpoint",
    ],
    ["credential_rejected: the provider refused its sponsor's credential", "credential rejected"],
    ["budget exceeded: rented node gpu-hf reached its daily budget of $5.00", "budget"],
    ["routing policy is never", "policy: never"],
    ["unreachable: connect ECONNREFUSED 127.0.0.2:9 while asking a very long question", "unreachable"],
    ["scaled to zero", "scaled to zero"],
  ])("a reason's badge: %s → %s", (reason, badge) => {
    expect(reasonBadgeText(reason)).toBe(badge);
  });
});
