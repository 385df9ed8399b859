// One clock per page, and a history that explains, in Debian Chromium against a real loopback
// cluster whose Hugging Face world (and so the sponsor's clock, as in `pair demo`) runs months away
// from the wall clock: gpu-hf's page shows its real GPU, the idle timer, the budget's reset time and
// every history row on that virtual clock, never the browser's; moving the clock moves the page.
// Each state change says why: paused by its sponsor, woken by a request from the laptop, paused by
// the budget until the next (virtual) day, which the node list says as a short badge.
import type { Browser, BrowserContext } from "playwright-core";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin } from "../../../node/test/cluster/node-pair-harness.js";
import { launchChromium } from "./browser.js";
import { poll, signedInPage } from "./signed-in.js";
import { HF_MODEL, HF_NODE, startUiCluster, type UiCluster } from "./ui-cluster.js";

/** The sandbox's virtual morning, four months before the wall clock's today. */
const VIRTUAL_START = Date.parse("2026-08-01T09:00:00Z");

let cluster: UiCluster;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  // $0.10 a day at $0.80/hr: the cap is reached after 7.5 billed (virtual) minutes.
  cluster = await startUiCluster({ hf: { startMs: VIRTUAL_START, usdPerDay: 0.1, scaleToZeroMin: 600 } });
  browser = await launchChromium();
});
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await cluster?.close();
});

async function hfState(): Promise<string | undefined> {
  const rows = (await admin(cluster.sponsor, "/pair/v1/rented")).json as { name: string; state: string }[];
  return rows.find((r) => r.name === HF_NODE)?.state;
}

/** The wall clock's date as the page would print it (UTC page): it must appear nowhere. */
const wallDate = () => new Date().toISOString().slice(0, 10);

// One story on one world, its steps in order: each step starts from what the one before left (the
// pause, the wake, the clock moved on), so they are one test, never several that lean on each other.
describe("one clock per page, and a history that explains", () => {
  it("reads every time on the sandbox's clock, says why each state changed, and follows the clock moved on", async () => {
    // Step 1: the idle timer and every history row on the sandbox's clock, with the real GPU.
    await poll(hfState).toBe("running");
    const page = await signedInPage(browser, cluster.sponsor, contexts, { timezoneId: "UTC" });
    const row = page.locator(`tr[data-node="${HF_NODE}"]`);
    await poll(() => row.innerText()).toMatch(/L4 ×1/);
    await page.goto(`${cluster.sponsor.node.url}/ui/#/nodes/${HF_NODE}`);
    const facts = page.locator("dl.facts");
    await poll(() => facts.innerText()).toMatch(
      /Idle timer\s+(under a second|\d+\.\d s|\d+ min \d\d s) since/,
    );
    expect(await facts.innerText()).toMatch(/GPU\s+L4 ×1/);
    const history = page.getByRole("region", { name: "State history" });
    await history.locator('tr[data-state-change="running"]').first().waitFor();
    expect(await history.innerText()).toMatch(/2026-08-01 09:0\d:\d\d/);
    expect(await page.locator("main").innerText()).not.toContain(wallDate());

    // Step 2: who paused it, and which node's request woke it.
    expect(
      (await admin(cluster.sponsor, "/pair/v1/rented/lifecycle", { name: HF_NODE, action: "pause" })).status,
    ).toBe(200);
    const paused = history.locator('tr[data-state-change="paused"]').first();
    await poll(() => paused.innerText()).toMatch(/2026-08-01 09:\d\d:\d\d[\s\S]*paused by its sponsor/);

    // The laptop sees gpu-hf once it is shared; its request reaches it through the sponsor and wakes it.
    await admin(cluster.sponsor, "/pair/v1/rented/share", { name: HF_NODE, share: true });
    await poll(async () => {
      const rows = (await admin(cluster.laptop, "/pair/v1/nodes")).json as {
        name: string;
        shared?: boolean;
      }[];
      return rows.some((r) => r.name === HF_NODE && r.shared === true);
    }).toBe(true);
    const res = await request(`${cluster.laptop.node.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: HF_MODEL, messages: [{ role: "user", content: "hi" }] }),
    });
    await res.body.text();
    expect(res.statusCode).toBe(200);
    const woken = history.locator("tr", { hasText: "woken by a request from laptop" });
    await woken.first().waitFor();
    // Its own row: the wake is not folded away with the provider's steps that follow it.
    expect(await woken.first().getAttribute("data-burst")).toBeNull();
    expect(await page.locator("main").innerText()).not.toContain(wallDate());

    // Step 3: the clock moved on: the idle timer, the budget's reset time and the history follow.
    await poll(hfState).toBe("running");
    // Ten virtual minutes billed at $0.80/hr: past the $0.10 daily cap.
    cluster.hf.advance(10 * 60_000);
    await poll(() => facts.innerText()).toMatch(/Idle timer\s+1\d min \d\d s since the last PAIR workload/);
    await poll(() => facts.innerText()).toMatch(/State\s+paused/);
    // The reset is the sandbox's next midnight, read like every other time on the page.
    expect(await facts.innerText()).toMatch(/paused until 2026-08-02 00:00:00/);
    const budget = page.locator('tr[data-state-change="paused"]', { hasText: "budget reached" }).first();
    await poll(() => budget.innerText()).toMatch(
      /2026-08-01 09:\d\d:\d\d[\s\S]*paused: budget reached until 2026-08-02 00:00:00/,
    );
    expect(await page.locator("main").innerText()).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:/);
    // The table says it in two words; the full text is its title and on the node's page.
    await page.getByRole("link", { name: "Nodes", exact: true }).click();
    const badge = page.locator(`tr[data-node="${HF_NODE}"] td[data-label="Takes requests"] .badge.reason`);
    await poll(() => badge.getAttribute("title")).toMatch(/paused until 2026-08-02 00:00:00/);
    expect((await badge.innerText()).trim()).toMatch(/^no: budget\b/);
    expect(await page.locator("main").innerText()).not.toContain(wallDate());
  });
});
