// Add a rented GPU from the dashboard against the real create API and the Hugging Face emulator
// (virtual time at real speed, pending 200 ms, initializing 400 ms): the view says the sponsor is
// signed in as alice (its token in memory under os-credential-store:pair/hf), lists the catalog and
// the emulator's GPUs with $/hr, creates `gpu-new` from the catalog on an L4 with caps, and follows
// it through the provider's states to running with elapsed time and cost so far; the node then
// appears in the node list, labelled, with its price, and its detail shows the caps.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../node/test/cli/cli-harness.js";
import { admin } from "../../../node/test/cluster/node-pair-harness.js";
import { launchChromium } from "./browser.js";
import { startUiCluster, type UiCluster } from "./ui-cluster.js";

let cluster: UiCluster;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  cluster = await startUiCluster();
  browser = await launchChromium();
});
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await cluster?.close();
});

async function signedIn(): Promise<Page> {
  const cli = await runCli(["ui", "--json", "--config", cluster.sponsor.configFile]);
  expect(cli.code, cli.stderr).toBe(0);
  const { url } = JSON.parse(cli.stdout) as { url: string };
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.goto(url);
  await page.getByRole("heading", { level: 1, name: "PAIR on sponsor" }).waitFor();
  return page;
}

describe("Add rented GPU against the create API", () => {
  it("creates a Hugging Face endpoint from the catalog and watches it reach running", async () => {
    const page = await signedIn();
    await page.getByRole("link", { name: "Add rented GPU" }).click();
    await page.getByText(/Signed in to Hugging Face as alice/).waitFor();
    await page.getByLabel("Name in PAIR").fill("gpu-new");
    await page.getByLabel("Catalog model").selectOption("Qwen/Qwen3-0.6B");
    await page.getByLabel("Region").selectOption("aws/us-east-1");
    const l4 = page.locator('tr[data-offer="nvidia-l4"]').filter({ hasText: "$0.80/hr" }).first();
    await l4.getByRole("radio").check();
    await page.getByLabel("Cap per day (USD, empty: none)").fill("3");
    await page.getByLabel("Cap per month (USD, empty: none)").fill("30");
    await page.getByRole("button", { name: "Create" }).click();

    await page.getByRole("heading", { name: "Creating gpu-new" }).waitFor();
    // The provider's own words go by (at least one before running), then running.
    await expect
      .poll(() => page.locator("[data-provider-state]").innerText(), { timeout: 15_000, interval: 50 })
      .toMatch(/pending|initializing|running/);
    await page.getByRole("status").filter({ hasText: "gpu-new is running." }).waitFor({ timeout: 30_000 });
    expect(await page.locator(".progress").innerText()).toMatch(/Elapsed\s+\S+/);
    expect(await page.locator(".progress").innerText()).toMatch(/Cost so far\s+\$/);

    const rows = (await admin(cluster.sponsor, "/pair/v1/rented")).json as {
      name: string;
      budget?: { usd_per_day: number | null; usd_per_month: number | null };
    }[];
    expect(rows.find((r) => r.name === "gpu-new")?.budget).toEqual({ usd_per_day: 3, usd_per_month: 30 });
    expect(cluster.hf.endpoints.list("alice").map((e) => e.name)).toContain("gpu-new");

    await page.getByRole("link", { name: "Open gpu-new" }).click();
    await page.getByRole("heading", { level: 2, name: "gpu-new" }).waitFor();
    await page.locator("figure.spend-chart").filter({ hasText: "of $3.00 per day" }).waitFor();
    await page.getByRole("link", { name: "Nodes", exact: true }).click();
    const row = page.locator('tr[data-node="gpu-new"]');
    await expect
      .poll(() => row.innerText(), { timeout: 10_000 })
      .toMatch(/Rented · off-LAN[\s\S]*\$0\.80\/hr/);
  });
});
