// A managed rented GPU on the dashboard, in Debian Chromium against a real loopback cluster with the
// Hugging Face emulator: the node list shows `gpu-hf` labelled with its price; its detail shows the
// cost against the caps, the idle timer, open obligations and the state history; the sponsor pauses
// it through a confirmation (and a delete waits for the typed name); the views follow a change made
// elsewhere at once, over the live events, without a reload; the daily cost chart is on History; a
// peer sees the node but no action; a phone's width needs no sideways scrolling.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../node/test/cli/cli-harness.js";
import { admin, type TestNode } from "../../../node/test/cluster/node-pair-harness.js";
import { until } from "../../../node/test/support/eventually.js";
import { launchChromium } from "./browser.js";
import { HF_NODE, HF_TOKEN, startUiCluster, type UiCluster } from "./ui-cluster.js";

let browser: Browser;
const pages: Page[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});
afterEach(async () => {
  for (const p of pages.splice(0)) await p.close().catch(() => undefined);
});
afterAll(async () => {
  await browser?.close();
});

/** Each node's browser session, signed in once per world with the code `pair ui` prints: a test
 * opens its own page in it, which spares it a sign-in's seconds (the session keeps only the cookie). */
const sessions = new Map<TestNode, Promise<BrowserContext>>();

/** A world for the calling describe, started before its tests and closed after: the UI cluster,
 * once gpu-hf runs. */
function worldOfItsOwn(): { cluster: UiCluster } {
  const world = {} as { cluster: UiCluster };
  beforeAll(async () => {
    const cluster = await startUiCluster();
    world.cluster = cluster;
    await until(async () => (await rentedState(cluster)) === "running", 8_000);
  });
  afterAll(async () => {
    for (const node of [world.cluster?.sponsor, world.cluster?.laptop]) {
      if (node === undefined) continue;
      await (await sessions.get(node)?.catch(() => undefined))?.close();
      sessions.delete(node);
    }
    await world.cluster?.close();
  });
  return world;
}

function poll<T>(read: () => Promise<T> | T, timeout = 8_000) {
  return expect.poll(read, { timeout, interval: 50 });
}

/** A page of its own at `width` px with no script or console error, on `load` (a URL or a path). */
async function openPage(context: BrowserContext, node: TestNode, load: string, width: number): Promise<Page> {
  const page = await context.newPage();
  pages.push(page);
  await page.setViewportSize({ width, height: 800 });
  page.setDefaultTimeout(8_000);
  const errors: string[] = [];
  page.on("pageerror", (e) => void errors.push(e.message));
  page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));
  await page.goto(load);
  await page.getByRole("heading", { level: 1, name: `PAIR on ${node.name}` }).waitFor();
  expect(errors).toEqual([]);
  return page;
}

async function signIn(node: TestNode): Promise<BrowserContext> {
  const cli = await runCli(["ui", "--json", "--config", node.configFile]);
  expect(cli.code, cli.stderr).toBe(0);
  const { url } = JSON.parse(cli.stdout) as { url: string };
  const context = await browser.newContext();
  await openPage(context, node, url, 1280);
  return context;
}

async function signedIn(node: TestNode, width = 1280): Promise<Page> {
  let session = sessions.get(node);
  if (session === undefined) sessions.set(node, (session = signIn(node)));
  return openPage(await session, node, `${node.node.url}/ui/`, width);
}

async function rentedState(world: UiCluster): Promise<string | undefined> {
  const rows = (await admin(world.sponsor, "/pair/v1/rented")).json as { name: string; state: string }[];
  return rows.find((r) => r.name === HF_NODE)?.state;
}

/** A page signed in to the sponsor on gpu-hf's detail. */
async function detailPage(world: UiCluster): Promise<Page> {
  const page = await signedIn(world.sponsor);
  await page.goto(`${world.sponsor.node.url}/ui/#/nodes/${HF_NODE}`);
  await page.getByRole("heading", { level: 2, name: HF_NODE }).waitFor();
  return page;
}

// These only read the world they share: none changes what another reads.
describe("a managed rented GPU on the dashboard", () => {
  const world = worldOfItsOwn();

  it("lists it labelled, with its GPU and price, and says the view is live", async () => {
    await poll(() => rentedState(world.cluster)).toBe("running");
    const page = await signedIn(world.cluster.sponsor);
    const row = page.locator(`tr[data-node="${HF_NODE}"]`);
    await poll(() => row.innerText()).toMatch(/running/);
    const text = await row.innerText();
    expect(text).toMatch(/Rented · off-LAN/);
    expect(text).toMatch(/Hugging Face Inference Endpoint · via sponsor/);
    expect(text).toMatch(/\$0\.80\/hr/);
    await page.locator(".live-dot", { hasText: "Live" }).first().waitFor();
    expect(await page.content()).not.toContain(HF_TOKEN);
  });

  it("says at the top what is spent now, today and this month, against the caps", async () => {
    const page = await signedIn(world.cluster.sponsor);
    const now = page.locator('[data-overview="now"]');
    await poll(() => now.innerText()).toMatch(/\$0\.80\/hr \(gpu-hf\)/);
    expect(await page.locator('[data-overview="off-lan"]').innerText()).toMatch(
      /Off-LAN requests today\s+\d+ of \d+/,
    );
    const overview = page.locator("section.overview figure.spend-chart");
    expect(await overview.innerText()).toMatch(/Today: \$[\d.]+ of \$5\.00 per day/);
    expect(await overview.innerText()).toMatch(/This month: \$[\d.]+ of \$50\.00 per month/);
    expect(await overview.locator("li[data-capped=yes] svg").count()).toBe(2);
    await page.locator(`[data-series="${HF_NODE}"] figure.series-24h`).waitFor();
    await page.locator(`[data-series="${HF_NODE}"] figure.series-30d`).waitFor();
  });

  it("charts a managed node's billed spend from the ledger: the buckets add up to what it cost", async () => {
    const rows = (await admin(world.cluster.sponsor, "/pair/v1/rented")).json as {
      name: string;
      managed: { spend_usd: { total: number } | null } | null;
    }[];
    const total = rows.find((r) => r.name === HF_NODE)?.managed?.spend_usd?.total ?? 0;
    expect(total).toBeGreaterThan(0);
    for (const [range, buckets] of [
      ["24h", 24],
      ["30d", 30],
    ] as const) {
      const series = (
        await admin(world.cluster.sponsor, `/pair/v1/rented/spend?name=${HF_NODE}&range=${range}`)
      ).json as { bucket_s: number; points: { start: string; usd: number }[] };
      expect(series.points).toHaveLength(buckets);
      expect(series.points.reduce((s, p) => s + p.usd, 0)).toBeCloseTo(total, 5);
    }
    const refused = await admin(world.cluster.sponsor, `/pair/v1/rented/spend?name=${HF_NODE}&range=7y`);
    expect(refused.status).toBe(400);
  });

  it("shows cost against the caps, the idle timer, obligations and the state history", async () => {
    const page = await signedIn(world.cluster.sponsor);
    await page.getByRole("link", { name: HF_NODE, exact: true }).click();
    await page.getByRole("heading", { level: 2, name: HF_NODE }).waitFor();
    const chart = page.locator("figure.spend-chart");
    await chart.waitFor();
    expect(await chart.innerText()).toMatch(/Today: \$[\d.]+ of \$5\.00 per day \(\d+%\)/);
    expect(await chart.innerText()).toMatch(/This month: \$[\d.]+ of \$50\.00 per month/);
    expect(await chart.innerText()).toMatch(/This session: \$[\d.]+ \(no cap\)/);
    // A bar only against a cap: a session has none, so nothing looks nearly spent.
    expect(await chart.locator('li[data-spend="This session"] svg').count()).toBe(0);
    expect(await chart.locator('li[data-spend="Today"] svg').count()).toBe(1);
    await page.locator("figure.series-24h").waitFor();
    await page.locator("figure.series-30d").waitFor();
    const facts = page.locator("dl.facts");
    await poll(() => facts.innerText()).toMatch(/since the last PAIR workload, of 240 min/);
    // A running managed node holds one: PAIR owes its stop, closed only on the provider's confirmation.
    expect(await facts.innerText()).toMatch(/Open stop obligations\s+1 /);
    const history = page.getByRole("region", { name: "State history" });
    await history.locator('tr[data-state-change="running"]').first().waitFor();
  });

  it("deletes only when the node's name is typed", async () => {
    const page = await detailPage(world.cluster);
    await page.getByRole("button", { name: "Delete…" }).click();
    const dialog = page.getByRole("dialog", { name: `Delete ${HF_NODE}?` });
    const confirm = dialog.getByRole("button", { name: `Delete ${HF_NODE}` });
    expect(await confirm.getAttribute("aria-disabled")).toBe("true");
    const typed = dialog.getByLabel(`Type ${HF_NODE} to confirm`);
    await typed.fill("gpu-h");
    // Enter submits the dialog's form: refused while the name is wrong.
    await typed.press("Enter");
    await dialog.waitFor();
    expect(await confirm.getAttribute("aria-disabled")).toBe("true");
    expect(world.cluster.hf.endpoints.get("alice", "qwen")).toBeDefined();
    await typed.fill(HF_NODE);
    expect(await confirm.getAttribute("aria-disabled")).toBe("false");
    // Escape cancels, like the Cancel button: the endpoint is still there.
    await page.keyboard.press("Escape");
    await poll(() => dialog.count()).toBe(0);
    expect(world.cluster.hf.endpoints.get("alice", "qwen")).toBeDefined();
  });

  it("shows the daily cost chart on History", async () => {
    const page = await signedIn(world.cluster.sponsor);
    await page.getByRole("link", { name: "History" }).click();
    const chart = page.getByRole("img", { name: /^Estimated cost per day/ });
    await chart.waitFor();
    expect(await page.locator("figure.daily-chart rect.bar").count()).toBe(14);
  });

  it("shows a peer the node, its price and the cost its sponsor publishes, but no action", async () => {
    const peer = await signedIn(world.cluster.laptop);
    await peer.goto(`${world.cluster.laptop.node.url}/ui/#/nodes/${HF_NODE}`);
    await peer.getByRole("heading", { level: 2, name: HF_NODE }).waitFor();
    await poll(() => peer.locator("dl.facts").innerText()).toMatch(/\$0\.80\/hr/);
    await peer.getByText(/Its sponsor, sponsor, holds this node/).waitFor();
    await peer.locator("figure.spend-chart").filter({ hasText: "as its sponsor publishes it" }).waitFor();
    expect(await peer.getByRole("button", { name: "Pause", exact: true }).count()).toBe(0);
    expect(await peer.getByRole("button", { name: "Delete…" }).count()).toBe(0);
  });

  it("fits a 1,280-px window and a phone (390 px) on every view: no sideways scrolling", async () => {
    const views = [
      "nodes",
      `nodes/${HF_NODE}`,
      "nodes/gpu-rent",
      "nodes/laptop",
      "jobs",
      "batches",
      "history",
      "add",
    ];
    for (const width of [1280, 390]) {
      const p = await signedIn(world.cluster.sponsor, width);
      for (const view of views) {
        await p.goto(`${world.cluster.sponsor.node.url}/ui/#/${view}`);
        await p.locator("main h2").first().waitFor();
        await p.locator("p.freshness, form").first().waitFor();
        const [scroll, inner] = await p.evaluate<[number, number]>(
          "[document.documentElement.scrollWidth, window.innerWidth]",
        );
        expect(scroll, `#/${view} at ${width} px`).toBeLessThanOrEqual(inner);
      }
    }
  });
});

// One story on a world of its own, its steps in order: each starts from what the one before left
// (paused, resumed, the clock moved on), so they are one test, never several that lean on each other.
describe("a managed rented GPU's lifecycle on the dashboard", () => {
  const world = worldOfItsOwn();

  it("pauses it after a confirmation, follows the resume made elsewhere, fits a phone, reads its clock", async () => {
    // Step 1: a pause only after a confirmation, its cause in the state history.
    const page = await detailPage(world.cluster);
    await page.getByRole("button", { name: "Pause", exact: true }).click();
    const dialog = page.getByRole("dialog", { name: `Pause ${HF_NODE}?` });
    await dialog.waitFor();
    // Cancel first: nothing happens.
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await poll(() => dialog.count()).toBe(0);
    expect(await rentedState(world.cluster)).toBe("running");

    await page.getByRole("button", { name: "Pause", exact: true }).click();
    await page
      .getByRole("dialog")
      .getByRole("button", { name: `Pause ${HF_NODE}` })
      .click();
    await page
      .getByRole("status")
      .filter({ hasText: `${HF_NODE} paused` })
      .waitFor();
    await poll(() => rentedState(world.cluster)).toBe("paused");
    await poll(() => page.locator("dl.facts").innerText()).toMatch(/State\s+paused/);
    const paused = page.locator('tr[data-state-change="paused"]').first();
    await paused.waitFor();
    expect(await paused.innerText()).toMatch(/paused by its sponsor/);
    // Persisted on the node, oldest first.
    const stored = (await admin(world.cluster.sponsor, `/pair/v1/rented/history?name=${HF_NODE}`)).json as {
      state: string;
      reason: string | null;
    }[];
    expect(stored.map((c) => c.state)).toContain("running");
    expect(stored[stored.length - 1]).toMatchObject({ state: "paused", reason: "paused by its sponsor" });

    // Step 2: the resume made elsewhere shows at once, without a reload (live events).
    await page.getByRole("link", { name: "Nodes", exact: true }).click();
    const row = page.locator(`tr[data-node="${HF_NODE}"]`);
    await poll(() => row.innerText()).toMatch(/paused/);
    await page.evaluate("window.__sameDocument = true");
    // With the events flowing the views poll only every 10 s: seeing it within 4 s is the events' doing.
    const resumed = await admin(world.cluster.sponsor, "/pair/v1/rented/lifecycle", {
      name: HF_NODE,
      action: "resume",
    });
    expect(resumed.status).toBe(200);
    await poll(() => row.innerText(), 4_000).toMatch(/running|starting/);
    expect(await page.evaluate("window.__sameDocument")).toBe(true);

    // Step 3: a phone's width (390 px) reads the detail, the pause in its history, without sideways
    // scrolling.
    const phone = await signedIn(world.cluster.sponsor, 390);
    await phone.goto(`${world.cluster.sponsor.node.url}/ui/#/nodes/${HF_NODE}`);
    await phone.locator("figure.spend-chart").waitFor();
    await phone.locator('tr[data-state-change="paused"]').first().waitFor();
    expect(await phone.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);

    // Step 4: every time on the node's clock: moving the sandbox's clock moves the page.
    await page.goto(`${world.cluster.sponsor.node.url}/ui/#/nodes/${HF_NODE}`);
    const facts = page.locator("dl.facts");
    await poll(() => facts.innerText()).toMatch(/since the last PAIR workload/);
    const before = /Idle timer\s+(.*) since/.exec(await facts.innerText())?.[1] ?? "";
    expect(before).not.toMatch(/^\d+ h/);
    // Ten virtual minutes: under the endpoint's 15-min scale-to-zero and the 240-min idle pause.
    world.cluster.hf.advance(10 * 60_000);
    await poll(() => facts.innerText()).toMatch(/Idle timer\s+1\d min \d\d s since the last PAIR workload/);
  });
});
