// The Add rented GPU view in Chromium, coded against the create API's contract (api-create.md)
// with the node's answers to those routes stubbed in the browser (page.route), so the form is proven
// before that API lands: the sign-in state, a catalog model, the GPU list by region with $/hr and
// quota, caps and idle settings make exactly the documented POST body; the progress follows
// provider_state with elapsed time and cost to running; an API refusal is shown; a missing token
// says how to store one. The real API's test is test/pending/add-rented-gpu.e2e.ts.
import type { Browser, BrowserContext, Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../node/test/cli/cli-harness.js";
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

const HARDWARE = [
  ["aws", "us-east-1", "nvidia-t4", "x1", "Nvidia T4", 1, 16, 0.5, 3],
  ["aws", "us-east-1", "nvidia-l4", "x1", "Nvidia L4", 1, 24, 0.8, 8],
  ["aws", "eu-west-1", "nvidia-l4", "x1", "Nvidia L4", 1, 24, 0.8, 8],
].map(([vendor, region, type, size, gpu, gpus, vram, usd, quota]) => ({
  vendor,
  region,
  accelerator: "gpu",
  instance_type: type,
  instance_size: size,
  gpu,
  gpus,
  vram_gb: vram,
  usd_per_hour: usd,
  quota_available: quota,
}));

async function signedIn(): Promise<Page> {
  const cli = await runCli(["ui", "--json", "--config", cluster.sponsor.configFile]);
  const { url } = JSON.parse(cli.stdout) as { url: string };
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(8_000);
  await page.goto(url);
  await page.getByRole("heading", { level: 1, name: "PAIR on sponsor" }).waitFor();
  return page;
}

function json(route: Route, status: number, body: unknown) {
  return route.fulfill({ status, contentType: "application/json", body: JSON.stringify(body) });
}

describe("Add rented GPU", () => {
  it("builds the documented create request and follows the new node to running", async () => {
    const page = await signedIn();
    let created: Record<string, unknown> | undefined;
    let polls = 0;
    await page.route("**/pair/v1/rented/account*", (r) =>
      json(r, 200, {
        credential: "os-credential-store:pair/hf",
        signed_in: true,
        namespace: "alice",
        account_type: "user",
        message: null,
      }),
    );
    await page.route("**/pair/v1/rented/catalog*", (r) =>
      json(r, 200, [{ repo_id: "Qwen/Qwen3-0.6B" }, { repo_id: "meta-llama/Llama-3.2-1B-Instruct" }]),
    );
    await page.route("**/pair/v1/rented/hardware*", (r) => {
      expect(new URL(r.request().url()).searchParams.get("namespace")).toBe("alice");
      return json(r, 200, HARDWARE);
    });
    await page.route("**/pair/v1/rented/create", (r) => {
      expect(r.request().method()).toBe("POST");
      expect(r.request().headers()["x-pair-csrf"]).toBeTruthy();
      created = r.request().postDataJSON() as Record<string, unknown>;
      return json(r, 202, { name: created["name"], state: "starting" });
    });
    // Progress: the provider's states one after another, then running.
    const states = ["pending", "initializing", "initializing", "running"];
    await page.route("**/pair/v1/rented", (r) => {
      const provider = states[Math.min(polls++, states.length - 1)] ?? "running";
      return json(r, 200, [
        {
          name: "gpu-new",
          state: provider === "running" ? "running" : "starting",
          provider_state: provider,
          provider_message: null,
          created: { started_at: new Date().toISOString(), elapsed_s: 30 * polls },
          budget: { usd_per_day: 4, usd_per_month: 40 },
          managed: { spend_usd: { session: 0.01, today: 0.01, month: 0.01, total: 0.0133 * polls } },
          warnings: [],
        },
      ]);
    });

    await page.getByRole("link", { name: "Add rented GPU" }).click();
    await page.getByRole("heading", { level: 2, name: "Add rented GPU" }).waitFor();
    await page.getByText("Signed in to Hugging Face as alice (user)").waitFor();
    await page.getByLabel("Name in PAIR").fill("gpu-new");
    await page.getByLabel("Catalog model").selectOption("meta-llama/Llama-3.2-1B-Instruct");
    const offers = page.locator("tr[data-offer]");
    expect(await offers.count()).toBe(1); // aws/eu-west-1 comes first
    await page.getByLabel("Region").selectOption("aws/us-east-1");
    await expect.poll(() => offers.count()).toBe(2);
    expect(await offers.nth(0).innerText()).toMatch(/Nvidia T4[\s\S]*16 GB[\s\S]*\$0\.50\/hr[\s\S]*3/);
    await page.getByLabel("Region").selectOption("aws/eu-west-1");
    await expect.poll(() => offers.count()).toBe(1);
    await page.getByLabel(/Nvidia L4/).check();
    await page.getByLabel("Cap per day (USD, empty: none)").fill("4");
    await page.getByLabel("Cap per month (USD, empty: none)").fill("40");
    await page.getByLabel("Pause after this many idle minutes").fill("20");
    await page.getByLabel("Share with the cluster").check();
    await page.getByText("Nvidia L4 in aws/eu-west-1: $0.80/hr").waitFor();
    await page.getByRole("button", { name: "Create" }).click();

    await page.getByRole("heading", { name: "Creating gpu-new" }).waitFor();
    await page.getByRole("status").filter({ hasText: "gpu-new is running." }).waitFor({ timeout: 10_000 });
    expect(await page.locator("[data-provider-state]").innerText()).toBe("running");
    expect(await page.locator(".progress").innerText()).toMatch(/Elapsed\s+\d+(\.\d)? s|Elapsed\s+\d+ min/);
    expect(await page.locator(".progress").innerText()).toMatch(/Cost so far\s+\$0\.\d+/);
    expect(created).toEqual({
      name: "gpu-new",
      provider: "huggingface-endpoint",
      credential: "os-credential-store:pair/hf",
      namespace: "alice",
      catalog: "meta-llama/Llama-3.2-1B-Instruct",
      vendor: "aws",
      region: "eu-west-1",
      instance_type: "nvidia-l4",
      instance_size: "x1",
      access: "private",
      budget: { usd_per_day: 4, usd_per_month: 40 },
      lifecycle: { idle_pause_min: 20, wake_on_request: true },
      share_with_cluster: true,
    });
  });

  it("shows the API's refusal, and checks the form before sending", async () => {
    const page = await signedIn();
    await page.route("**/pair/v1/rented/account*", (r) =>
      json(r, 200, {
        credential: "os-credential-store:pair/hf",
        signed_in: true,
        namespace: "alice",
        account_type: "user",
        message: null,
      }),
    );
    await page.route("**/pair/v1/rented/catalog*", (r) => json(r, 200, []));
    await page.route("**/pair/v1/rented/hardware*", (r) => json(r, 200, HARDWARE));
    let sent = 0;
    await page.route("**/pair/v1/rented/create", (r) => {
      sent++;
      return json(r, 429, {
        error: { message: "gpu-x: the budget allows no more spending today", code: "budget_exceeded" },
      });
    });
    await page.goto(`${cluster.sponsor.node.url}/ui/#/add`);
    // No catalog: the repository id is asked for.
    await page.getByLabel("Repository id", { exact: true }).waitFor();
    await page.getByRole("button", { name: "Create" }).click();
    await page
      .getByRole("alert")
      .filter({ hasText: /Name: lowercase/ })
      .waitFor();
    expect(sent).toBe(0);
    await page.getByLabel("Name in PAIR").fill("gpu-x");
    await page.getByLabel("Repository id", { exact: true }).fill("Qwen/Qwen3-0.6B");
    // No cap at all: the form asks for one (the node would refuse it, budget_required).
    await page.getByLabel(/Cap per day/).fill("");
    await page.getByLabel(/Cap per month/).fill("");
    await page.getByRole("button", { name: "Create" }).click();
    await page
      .getByRole("alert")
      .filter({ hasText: /Budget: give a cap per day or per month/ })
      .waitFor();
    expect(sent).toBe(0);
    await page.getByLabel(/Cap per day/).fill("2");
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByRole("alert").filter({ hasText: "the budget allows no more spending today" }).waitFor();
    expect(sent).toBe(1);
  });

  it("says how to sign in when the token is not in the OS credential store", async () => {
    const page = await signedIn();
    await page.route("**/pair/v1/rented/account*", (r) =>
      json(r, 200, {
        credential: "os-credential-store:pair/hf",
        signed_in: false,
        namespace: null,
        account_type: null,
        message: "no token in the OS credential store: pair credential set hf",
      }),
    );
    await page.goto(`${cluster.sponsor.node.url}/ui/#/add`);
    await page.getByRole("heading", { name: "Not signed in to Hugging Face" }).waitFor();
    await page.getByText("no token in the OS credential store: pair credential set hf").waitFor();
    expect(await page.getByRole("button", { name: "Create" }).count()).toBe(0);
  });
});
