// The dashboard in a real browser (Debian Chromium via playwright-core) against a real loopback
// cluster: sign in with the code `pair ui` prints, see every node (the rented one labelled
// `Rented · off-LAN`), switch sharing and the policy as its sponsor, watch a request from the peer
// in Jobs and History with the off-LAN badge; a peer sees the rented node but no actions; no session
// means no dashboard and no admin API, and a change without the CSRF token is refused.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../node/test/cli/cli-harness.js";
import { admin, type TestNode } from "../../../node/test/cluster/node-pair-harness.js";
import { launchChromium } from "./browser.js";
import { LAPTOP_MODEL, RENTED_MODEL, startUiCluster, type UiCluster } from "./ui-cluster.js";
import { until } from "../../../node/test/support/eventually.js";
import { postChat } from "../../../node/test/support/chat.js";

let cluster: UiCluster;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  // Each answer streams 8 tokens 250 ms apart: a job stays running long enough to be seen.
  cluster = await startUiCluster({ tokenDelayMs: 250, maxTokens: 8 });
  browser = await launchChromium();
});
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await cluster?.close();
});

/** expect.poll with time for a refresh or two (the views poll every 1–1.5 s). */
function poll<T>(read: () => Promise<T> | T) {
  return expect.poll(read, { timeout: 8_000, interval: 50 });
}

/** A fresh browser profile (no cookies). */
async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(8_000);
  return page;
}

/** `pair ui --json` for `node`, then open the link: a signed-in page on /ui/. */
async function signedIn(node: TestNode): Promise<Page> {
  const cli = await runCli(["ui", "--json", "--config", node.configFile]);
  expect(cli.code, cli.stderr).toBe(0);
  const { url } = JSON.parse(cli.stdout) as { url: string };
  const page = await newPage();
  const errors: string[] = [];
  page.on("console", (m) => void (m.type() === "error" && errors.push(m.text())));
  page.on("pageerror", (e) => void errors.push(e.message));
  await page.goto(url);
  expect(new URL(page.url()).pathname).toBe("/ui/");
  await page.getByRole("heading", { level: 1, name: `PAIR on ${node.name}` }).waitFor();
  // No CSP violation, no script error: everything came from the node itself.
  expect(errors).toEqual([]);
  return page;
}

const chat = (node: TestNode, model: string) => postChat(node.node.url, { model, stream: true });

/** Whether the laptop sees gpu-rent shared as `shared`, over the cluster. */
async function peerSeesShared(shared: boolean): Promise<void> {
  await until(async () => {
    const rows = (await admin(cluster.laptop, "/pair/v1/nodes")).json as { name: string; shared?: boolean }[];
    return rows.find((r) => r.name === "gpu-rent")?.shared === shared;
  }, 8_000);
}

// Each test signs in its own page and sets the sharing it needs: none relies on what another left.
describe("the dashboard in a browser", () => {
  it("signs in with the one-time code from `pair ui` and shows every node, the rented one labelled", async () => {
    // gpu-rent as the config says (not shared, when-no-local-node), whatever the tests before changed.
    expect((await admin(cluster.sponsor, "/pair/v1/rented/reset", { name: "gpu-rent" })).status).toBe(200);
    const page = await signedIn(cluster.sponsor);
    const cookies = await page.context().cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/" });

    const row = (name: string) => page.locator(`tr[data-node="${name}"]`);
    await poll(() => row("gpu-rent").innerText()).toMatch(/Rented · off-LAN/);
    await poll(() => row("gpu-rent").innerText()).toMatch(/running/);
    const rented = await row("gpu-rent").innerText();
    expect(rented).toMatch(/OpenAI-compatible endpoint · via sponsor/);
    expect(rented).toMatch(new RegExp(RENTED_MODEL));
    expect(rented).toMatch(/not shared/);
    expect(rented).toMatch(/when-no-local-node/);
    expect(await row("sponsor").innerText()).toMatch(/this node/);
    await poll(() => row("laptop").innerText()).toMatch(/peer[\s\S]*up[\s\S]*qwen2\.5:7b/);
    // The model's window as the peer published it: its Ollama emulator states 1,048,576 tokens, and
    // PAIR raises num_ctx as far as a prompt needs (docs/context.md), so that is what the laptop holds.
    await poll(() => row("laptop").innerText()).toMatch(/qwen2\.5:7b \(1024k context\)/);
    // The rented node's URL and token appear nowhere on the page.
    const html = await page.content();
    expect(html).not.toContain(cluster.rented.baseUrl);
    expect(html).not.toContain("hf_dashboardTestToken");
  });

  it("lets the sponsor switch sharing and the policy; the change shows here and reaches the peer", async () => {
    expect((await admin(cluster.sponsor, "/pair/v1/rented/reset", { name: "gpu-rent" })).status).toBe(200);
    const page = await signedIn(cluster.sponsor);
    await page.getByRole("link", { name: "gpu-rent" }).click();
    await page.getByRole("heading", { level: 2, name: "gpu-rent" }).waitFor();
    const share = page.getByRole("switch", { name: "Share with the cluster" });
    expect(await share.getAttribute("aria-checked")).toBe("false");
    await share.click();
    await poll(() => share.getAttribute("aria-checked")).toBe("true");
    await page.getByRole("status").filter({ hasText: "gpu-rent is shared with the cluster" }).waitFor();
    // The peer learns it over the cluster, at once.
    await peerSeesShared(true);

    await page.getByLabel("Routing policy").selectOption("prefer");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByRole("status").filter({ hasText: "routing policy prefer" }).waitFor();
    const rows = (await admin(cluster.sponsor, "/pair/v1/nodes")).json as { name: string; policy?: string }[];
    expect(rows.find((r) => r.name === "gpu-rent")?.policy).toBe("prefer");
    // Keyboard: the switch is reachable and works with the keyboard alone.
    await share.focus();
    await page.keyboard.press("Space");
    await poll(() => share.getAttribute("aria-checked")).toBe("false");
    await page.keyboard.press("Enter");
    await poll(() => share.getAttribute("aria-checked")).toBe("true");
  });

  it("shows a request from the peer in Jobs while it runs, then in History, with the off-LAN badge", async () => {
    // The peer may use gpu-rent only while it is shared.
    const shared = await admin(cluster.sponsor, "/pair/v1/rented/share", { name: "gpu-rent", share: true });
    expect(shared.status).toBe(200);
    await peerSeesShared(true);
    const page = await signedIn(cluster.sponsor);
    await page.getByRole("link", { name: "Jobs" }).click();
    await page.getByRole("heading", { level: 2, name: "Jobs" }).waitFor();
    const answer = chat(cluster.laptop, RENTED_MODEL);
    const job = page.locator("tr[data-workload]").filter({ hasText: "laptop → gpu-rent" });
    await job.waitFor({ timeout: 5_000 });
    expect(await job.innerText()).toMatch(/off-LAN/);
    expect(await job.innerText()).toMatch(new RegExp(RENTED_MODEL));
    const res = await answer;
    expect(res.headers["x-pair-off-lan"]).toBe("1");
    await res.body.text();

    await page.getByRole("link", { name: "History" }).click();
    const done = page.locator("tr[data-workload]").filter({ hasText: "gpu-rent" });
    await done.first().waitFor();
    const text = await done.first().innerText();
    expect(text).toMatch(/laptop/);
    expect(text).toMatch(/off-LAN/);
    expect(text).toMatch(/completed/);
    // A second workload, on the LAN: the sponsor forwards it to the laptop's engine.
    const lan = await chat(cluster.sponsor, LAPTOP_MODEL);
    expect(lan.headers["x-pair-off-lan"]).toBeUndefined();
    await lan.body.text();
    const rows = page.locator("tr[data-workload]");
    await poll(() => rows.count()).toBe(2);
    const lanRow = rows.filter({ hasText: LAPTOP_MODEL });
    expect(await lanRow.innerText()).toMatch(/sponsor\s+laptop\s+LAN/);
    expect(await lanRow.innerText()).not.toMatch(/off-LAN/);
    // The filters: by node (origin or serving) and by model.
    await page.getByLabel("Node").selectOption("gpu-rent");
    await poll(() => rows.count()).toBe(1);
    expect(await rows.innerText()).toMatch(/off-LAN/);
    await page.getByLabel("Model").selectOption(LAPTOP_MODEL);
    await page.getByText("None match the filters.").waitFor();
    await page.getByLabel("Node").selectOption({ label: "all nodes" });
    await poll(() => rows.count()).toBe(1);
    expect(await rows.innerText()).toMatch(/laptop/);
  });

  it("shows a peer the rented node with its facts but no actions", async () => {
    const peerPage = await signedIn(cluster.laptop);
    await peerPage.goto(`${cluster.laptop.node.url}/ui/#/nodes/gpu-rent`);
    await peerPage.getByRole("heading", { level: 2, name: "gpu-rent" }).waitFor();
    await peerPage.getByText("Rented · off-LAN").first().waitFor();
    await peerPage.getByText(/Its sponsor, sponsor, holds this node/).waitFor();
    expect(await peerPage.getByRole("switch").count()).toBe(0);
    expect(await peerPage.getByRole("button", { name: "Apply" }).count()).toBe(0);
  });

  it("works from the keyboard: a skip link first, then the views' links", async () => {
    const page = await signedIn(cluster.sponsor);
    await page.goto(`${cluster.sponsor.node.url}/ui/#/history`);
    await page.reload(); // a fresh page: the focus starts at the top
    await page.getByRole("heading", { level: 2, name: "History" }).waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate<string>("document.activeElement.textContent")).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect(await page.evaluate<string>("document.activeElement.id")).toBe("main");
    expect(new URL(page.url()).hash).toBe("#/history"); // the skip link does not change the view
    await page.reload();
    await page.getByRole("heading", { level: 2, name: "History" }).waitFor();
    await page.keyboard.press("Tab"); // skip link
    await page.keyboard.press("Tab"); // Nodes
    expect(await page.evaluate<string>("document.activeElement.textContent")).toBe("Nodes");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { level: 2, name: "Nodes" }).waitFor();
  });

  it("keeps it readable at a phone's width", async () => {
    const page = await signedIn(cluster.sponsor);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("link", { name: "Nodes" }).click();
    const row = page.locator('tr[data-node="gpu-rent"]');
    await row.waitFor();
    // No sideways scrolling: the page is no wider than the screen.
    const width = await page.evaluate<number>("document.documentElement.scrollWidth");
    expect(width).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("resets what the sponsor changed here to the config's values; the peer learns it", async () => {
    // Changed here at run time first, whatever the tests before did: shared, policy prefer.
    for (const [path, body] of [
      ["/pair/v1/rented/share", { name: "gpu-rent", share: true }],
      ["/pair/v1/rented/policy", { name: "gpu-rent", use: "prefer" }],
    ] as const)
      expect((await admin(cluster.sponsor, path, body)).status).toBe(200);
    const page = await signedIn(cluster.sponsor);
    await page.goto(`${cluster.sponsor.node.url}/ui/#/nodes/gpu-rent`);
    await page.getByRole("heading", { level: 2, name: "gpu-rent" }).waitFor();
    const share = page.getByRole("switch", { name: "Share with the cluster" });
    await poll(() => share.getAttribute("aria-checked")).toBe("true");
    const reset = page.getByRole("button", { name: "Reset to config" });
    await reset.click();
    await page
      .getByRole("status")
      .filter({ hasText: "gpu-rent: sharing and policy from the config again" })
      .waitFor();
    await poll(() => share.getAttribute("aria-checked")).toBe("false");
    await poll(() => page.getByLabel("Routing policy").inputValue()).toBe("when-no-local-node");
    await poll(() => reset.count()).toBe(0); // nothing changed here any more
    await peerSeesShared(false);
  });
});

describe("without a session", () => {
  it("the dashboard and the admin API are refused", async () => {
    const page = await newPage();
    const res = await page.goto(`${cluster.sponsor.node.url}/ui/`);
    expect(res?.status()).toBe(401);
    await page.getByRole("heading", { name: "Sign in to the PAIR dashboard" }).waitFor();
    const status = await page.evaluate("fetch('/pair/v1/nodes').then((r) => r.status)");
    expect(status).toBe(401);
  });

  it("a spent or made-up login link does not sign in", async () => {
    const cli = await runCli(["ui", "--json", "--config", cluster.sponsor.configFile]);
    const { url } = JSON.parse(cli.stdout) as { url: string };
    const first = await newPage();
    await first.goto(url);
    const second = await newPage();
    const res = await second.goto(url);
    expect(res?.status()).toBe(401);
    await second.getByRole("heading", { name: "Login link not valid" }).waitFor();
    expect(await second.context().cookies()).toEqual([]);
  });
});

describe("CSRF", () => {
  let evil: Server;
  afterAll(() => new Promise<void>((resolve) => (evil ? evil.close(() => resolve()) : resolve())));

  it("a signed-in page's change without the CSRF token is refused", async () => {
    const page = await signedIn(cluster.sponsor);
    const shared = async () =>
      ((await admin(cluster.sponsor, "/pair/v1/rented")).json as { name: string; shared: boolean }[]).find(
        (r) => r.name === "gpu-rent",
      )?.shared;
    const before = await shared();
    const status = await page.evaluate(
      `fetch('/pair/v1/rented/share', { method: 'POST', headers: { 'content-type': 'application/json' },
         body: JSON.stringify({ name: 'gpu-rent', share: ${String(!before)} }) }).then((r) => r.status)`,
    );
    expect(status).toBe(403);
    expect(await shared()).toBe(before);
  });

  it("another site's page cannot change anything with the session cookie", async () => {
    // Another port on the same host is the same *site*: the SameSite=Strict cookie does go along.
    evil = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<!doctype html><title>elsewhere</title><p>another site</p>");
    });
    await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
    const page = await signedIn(cluster.sponsor);
    const shared = async () =>
      ((await admin(cluster.sponsor, "/pair/v1/rented")).json as { name: string; shared: boolean }[]).find(
        (r) => r.name === "gpu-rent",
      )?.shared;
    const before = await shared();
    await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
    // A "simple" cross-origin POST (no preflight) that carries the cookie.
    await page.evaluate(
      `fetch(${JSON.stringify(`${cluster.sponsor.node.url}/pair/v1/rented/share`)}, { method: 'POST',
         mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' },
         body: JSON.stringify({ name: 'gpu-rent', share: ${String(!before)} }) }).then(() => 'sent', () => 'failed')`,
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(await shared()).toBe(before);
  });
});
