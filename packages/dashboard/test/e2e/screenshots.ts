/**
 * Screenshots of the dashboard's main views for README.md, taken from a real loopback cluster (the
 * browser tests' sponsor + laptop + rented nodes, the Hugging Face emulator) in Debian Chromium:
 * Nodes, a rented node's detail on its sponsor, a managed one's (cost against caps, state history),
 * the pause confirmation, Add rented GPU, Jobs with a request running off the LAN, Batches (one done,
 * one running), History with the
 * daily cost chart, and a node's detail at a phone's width. Until the create API is merged, the Add
 * rented GPU view's account/catalog/hardware answers are stubbed in the browser with the emulator's
 * own default catalog and hardware (what the real routes would relay).
 * Run: `npm run screenshots:ui` (writes docs/images/dashboard-*.png).
 * Must not know: what the views contain beyond what it waits for.
 */

import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { admin, type TestNode } from "../../../node/test/cluster/node-pair-harness.js";
import { submitChatBatch } from "../../../node/test/support/batch-submit.js";
import { launchChromium } from "./browser.js";
import { DEFAULT_CATALOG, DEFAULT_HARDWARE } from "@pair/emulators";
import { HF_MODEL, HF_NODE, LAPTOP_MODEL, RENTED_MODEL, startUiCluster } from "./ui-cluster.js";
import { chatReply } from "../../../node/test/support/chat.js";

const OUT = fileURLToPath(new URL("../../../../docs/images/", import.meta.url));

const chat = (node: TestNode, model: string) =>
  chatReply(node.node.url, { model, stream: true }).then((r) => r.status);

async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  await page.waitForTimeout(300); // let the last refresh paint
  await page.screenshot({ path: `${OUT}dashboard-${name}.png`, fullPage });
  console.log(`docs/images/dashboard-${name}.png`);
}

/** The create API's read routes, answered in the browser from the emulator's defaults. */
async function stubCreateApi(page: Page): Promise<void> {
  const json = (body: unknown) => ({
    status: 200,
    contentType: "application/json",
    body: JSON.stringify(body),
  });
  await page.route("**/pair/v1/rented/account*", (r) =>
    r.fulfill(
      json({
        credential: "os-credential-store:pair/hf",
        signed_in: true,
        namespace: "alice",
        account_type: "user",
        message: null,
      }),
    ),
  );
  await page.route("**/pair/v1/rented/catalog*", (r) =>
    r.fulfill(json(DEFAULT_CATALOG.map((c) => ({ repo_id: c.repoId })))),
  );
  await page.route("**/pair/v1/rented/hardware*", (r) =>
    r.fulfill(
      json(
        DEFAULT_HARDWARE.filter((h) => h.accelerator === "gpu").map((h) => ({
          vendor: h.vendor,
          region: h.region,
          accelerator: h.accelerator,
          instance_type: h.instanceType,
          instance_size: h.instanceSize,
          gpu: h.architecture,
          gpus: h.numAccelerators,
          vram_gb: h.gpuMemoryGb,
          usd_per_hour: h.pricePerHour,
          quota_available: h.maxAccelerators,
        })),
      ),
    ),
  );
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const cluster = await startUiCluster({ tokenDelayMs: 300, maxTokens: 12 });
  const browser = await launchChromium();
  try {
    const { sponsor, laptop } = cluster;
    await admin(sponsor, "/pair/v1/rented/share", { name: "gpu-rent", share: true });
    // The laptop learns it over the cluster; its requests may then reach the rented node.
    for (let i = 0; ; i++) {
      const rows = (await admin(laptop, "/pair/v1/nodes")).json as { name: string; shared?: boolean }[];
      if (rows.some((r) => r.name === "gpu-rent" && r.shared === true)) break;
      if (i > 100) throw new Error("the laptop never saw gpu-rent shared");
      await new Promise((r) => setTimeout(r, 50));
    }
    // Some history: LAN work forwarded to the laptop, and off-LAN work on the rented node.
    const statuses = await Promise.all([
      chat(sponsor, LAPTOP_MODEL),
      chat(sponsor, LAPTOP_MODEL),
      chat(laptop, RENTED_MODEL),
      chat(sponsor, RENTED_MODEL),
      chat(sponsor, HF_MODEL),
    ]);
    if (statuses.some((s) => s !== 200)) throw new Error(`a request failed: HTTP ${statuses.join(", ")}`);

    const code = (await admin(sponsor, "/pair/v1/ui/login-code", {})).json as { path: string };
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${sponsor.node.url}${code.path}`);
    await page.locator('tr[data-node="gpu-rent"]').filter({ hasText: "running" }).waitFor();
    await page.locator('tr[data-node="laptop"]').filter({ hasText: "up" }).waitFor();
    await shot(page, "nodes");

    await page.getByRole("link", { name: "gpu-rent" }).click();
    await page.getByRole("switch", { name: "Share with the cluster" }).waitFor();
    await shot(page, "node-detail");

    // The managed node: 40 billed minutes on the emulator's clock, a pause and a resume for its history.
    cluster.hf.advance(40 * 60_000);
    await sponsor.node.managed.tick();
    await admin(sponsor, "/pair/v1/rented/lifecycle", { name: HF_NODE, action: "pause" });
    await admin(sponsor, "/pair/v1/rented/lifecycle", { name: HF_NODE, action: "resume" });
    await page.goto(`${sponsor.node.url}/ui/#/nodes/${HF_NODE}`);
    await page.locator("figure.spend-chart").waitFor();
    await page.locator('tr[data-state-change="paused"]').first().waitFor();
    await page.waitForTimeout(1_500); // the resume's first states
    await shot(page, "managed-detail");
    await page.getByRole("button", { name: "Pause", exact: true }).click();
    await page.getByRole("dialog").waitFor();
    await shot(page, "pause-confirm", false);
    await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();

    await stubCreateApi(page);
    await page.goto(`${sponsor.node.url}/ui/#/add`);
    await page.getByLabel("Name in PAIR").fill("gpu-l4");
    await page.getByLabel("Region").selectOption("aws/us-east-1");
    await page.locator('tr[data-offer="nvidia-l4"]').first().getByRole("radio").check();
    await shot(page, "add-rented");

    await page.getByRole("link", { name: "Jobs" }).click();
    const running = [chat(laptop, RENTED_MODEL), chat(sponsor, LAPTOP_MODEL)];
    await page.locator("tr[data-workload]").filter({ hasText: "gpu-rent" }).waitFor();
    await page.waitForTimeout(1_200);
    await shot(page, "jobs");
    await Promise.all(running);

    // A finished batch and one running (its lines behind users' requests), on the Batches view.
    const finished = await submitChatBatch(sponsor.node.url, RENTED_MODEL, 4);
    for (let i = 0; ; i++) {
      const b = (await admin(sponsor, `/pair/v1/batches/${finished}`)).json as { status: string };
      if (b.status === "completed") break;
      if (i > 300) throw new Error(`batch ${finished} did not complete: ${b.status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await submitChatBatch(sponsor.node.url, RENTED_MODEL, 60);
    await page.getByRole("link", { name: "Batches" }).click();
    await page.locator('tr[data-batch][data-status="in_progress"]').waitFor();
    await page.waitForTimeout(2_000);
    await shot(page, "batches");

    await page.getByRole("link", { name: "History" }).click();
    await page.locator("tr[data-workload]").nth(5).waitFor();
    await shot(page, "history");

    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("link", { name: "Nodes", exact: true }).click();
    await page.locator('tr[data-node="gpu-rent"]').waitFor();
    await shot(page, "phone");
    await page.goto(`${sponsor.node.url}/ui/#/nodes/${HF_NODE}`);
    await page.locator("figure.spend-chart").waitFor();
    await shot(page, "phone-detail");
    await context.close();
  } finally {
    await browser.close();
    await cluster.close();
  }
}

await main();
