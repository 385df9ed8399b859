// The Batches view in Debian Chromium against a real loopback cluster: a batch submitted through the
// OpenAI Files and Batch APIs shows up with its status and its lines done of total, a finished one
// says so, a running one is cancelled from the page only after a confirmation (its waiting lines end
// as batch_cancelled on the node), and the view fits 1,280 px and a phone without sideways scrolling.
// The admin batch routes read and cancel, never create. The same cluster's gpu-hf bills with no cap
// (`budget: { unlimited: true }`): its cost reads "no cap" with no bar, and a warning says so.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admin } from "../../../node/test/cluster/node-pair-harness.js";
import { submitChatBatch } from "../../../node/test/support/batch-submit.js";
import { launchChromium } from "./browser.js";
import { poll, signedInPage } from "./signed-in.js";
import { RENTED_MODEL, startUiCluster, type UiCluster } from "./ui-cluster.js";

let cluster: UiCluster;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  // Each line streams 8 tokens 150 ms apart on the rented node: a 40-line batch runs for seconds.
  cluster = await startUiCluster({ tokenDelayMs: 150, maxTokens: 8, hf: { usdPerDay: null } });
  browser = await launchChromium();
});
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await cluster?.close();
});

/** Upload `lines` chat requests for the rented node as a batch file and create the batch. */
function submit(lines: number): Promise<string> {
  return submitChatBatch(cluster.sponsor.node.url, RENTED_MODEL, lines);
}

function signedIn(width: number): Promise<Page> {
  return signedInPage(browser, cluster.sponsor, contexts, { width });
}

// One story on one world, its steps in order: each reads the batches the ones before made, so they
// are one test, never several that lean on each other.
describe("the Batches view", () => {
  it("lists each batch, shows one's progress and cancels it, through the page and the admin API; fits a phone", async () => {
    // Step 1: each batch listed with its status and its lines done of total.
    const small = await submit(3);
    const page = await signedIn(1280);
    await page.getByRole("link", { name: "Batches" }).click();
    await page.getByRole("heading", { level: 2, name: "Batches" }).waitFor();
    const smallRow = page.locator(`tr[data-batch="${small}"]`);
    await poll(() => smallRow.getAttribute("data-status")).toBe("completed");
    const text = await smallRow.innerText();
    expect(text).toMatch(/3 of 3/);
    expect(text).toMatch(/3 done, 0 failed, 0 running, 0 waiting/);
    // Every line went to the rented node; the batch was not submitted with --rent.
    expect(await smallRow.locator('td[data-label="Served by"]').innerText()).toBe("gpu-rent 3 (100%)");
    expect(await smallRow.locator('td[data-label="Rental"]').innerText()).toBe("never rents");
    expect(text).toMatch(/ended \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
    expect(await smallRow.getByRole("button", { name: `Cancel ${small}` }).count()).toBe(0);
    expect(await smallRow.locator("progress").getAttribute("value")).toBe("3");

    // Step 2: a running batch's progress moves; it is cancelled only after a confirmation.
    const big = await submit(40);
    const row = page.locator(`tr[data-batch="${big}"]`);
    // Newest first.
    await poll(() => page.locator("tr[data-batch]").first().getAttribute("data-batch")).toBe(big);
    await poll(async () => Number(/(\d+) of 40/.exec(await row.innerText())?.[1] ?? 0)).toBeGreaterThan(0);
    expect(await row.getAttribute("data-status")).toBe("in_progress");
    expect(await row.innerText()).toMatch(/window ends .* \(in 2\d h \d\d min\)/);

    await row.getByRole("button", { name: `Cancel ${big}` }).click();
    const dialog = page.getByRole("dialog", { name: `Cancel ${big}?` });
    await dialog.getByRole("button", { name: "Cancel", exact: true }).click();
    await poll(() => dialog.count()).toBe(0);
    expect(await row.getAttribute("data-status")).toBe("in_progress");

    await row.getByRole("button", { name: `Cancel ${big}` }).click();
    await dialog.getByRole("button", { name: "Cancel the batch" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: `${big} cancelling` })
      .waitFor();
    await poll(() => row.getAttribute("data-status")).toBe("cancelled");
    const batch = (await admin(cluster.sponsor, `/pair/v1/batches/${big}`)).json as {
      status: string;
      request_counts: { total: number; completed: number; failed: number };
    };
    expect(batch.status).toBe("cancelled");
    // The lines that had not run ended as batch_cancelled: failed, not completed.
    expect(batch.request_counts.failed).toBeGreaterThan(0);
    expect(batch.request_counts.completed).toBeLessThan(40);
    expect(await row.innerText()).toMatch(
      new RegExp(`${batch.request_counts.completed} done, ${batch.request_counts.failed} failed`),
    );

    // Step 3: the admin API reads and cancels, never creates.
    const list = (await admin(cluster.sponsor, "/pair/v1/batches")).json as { data: { id: string }[] };
    expect(list.data.map((b) => b.id)).toEqual([big, small]);
    const create = await admin(cluster.sponsor, "/pair/v1/batches", {
      input_file_id: "file-x",
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    expect(create.status).toBe(405);
    expect((await admin(cluster.sponsor, "/pair/v1/batches/batch_nope")).status).toBe(404);

    // Step 4: the view fits a 1,280-px window and a phone (390 px): no sideways scrolling.
    for (const width of [1280, 390]) {
      const p = await signedIn(width);
      await p.goto(`${cluster.sponsor.node.url}/ui/#/batches`);
      await p.locator(`tr[data-batch="${big}"]`).waitFor();
      const [scroll, inner] = await p.evaluate<[number, number]>(
        "[document.documentElement.scrollWidth, window.innerWidth]",
      );
      expect(scroll, `#/batches at ${width} px`).toBeLessThanOrEqual(inner);
    }
  });
});

describe("a billed node with no cap", () => {
  it("shows the amount and no cap, no bar, and a warning, on its page and in the overview", async () => {
    const page = await signedIn(1280);
    const overview = page.locator("section.overview");
    await poll(() => overview.innerText()).toMatch(/\$0\.80\/hr \(gpu-hf\)/);
    await poll(() => overview.innerText()).toMatch(/No cap known here for gpu-hf/);
    expect(await overview.innerText()).toMatch(/Today: \$[\d.]+ \(no cap\)/);
    expect(await overview.locator("figure.spend-chart svg").count()).toBe(0);
    await page.goto(`${cluster.sponsor.node.url}/ui/#/nodes/gpu-hf`);
    const chart = page.locator("figure.spend-chart");
    await poll(() => chart.innerText()).toMatch(
      /No cap: this billed node runs with budget: \{ unlimited: true \}/,
    );
    expect(await chart.innerText()).toMatch(/This month: \$[\d.]+ \(no cap\)/);
    expect(await chart.locator("svg").count()).toBe(0);
  });
});
