// The clocks were mixed in `pair demo` itself: its sponsor's clock is the emulated Hugging Face's,
// months before the wall clock. Against the demo's own sandbox (startDemoCluster, as `pair demo` starts
// it) in Debian Chromium: gpu-hf's page reads the idle timer and the history on that clock; when the
// demo's clock is moved on, the timer follows, the idle pause lands on it, and the wall date is nowhere.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDemoCluster, type DemoCluster } from "@pair/demo";
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestNode } from "../../../node/test/cluster/node-pair-harness.js";
import { launchChromium } from "./browser.js";
import { poll, signedInPage } from "./signed-in.js";

const NODE = "gpu-hf";
let demo: DemoCluster;
let browser: Browser;
const contexts: BrowserContext[] = [];
const dir = mkdtempSync(join(tmpdir(), "pair-demo-clock-"));

beforeAll(async () => {
  demo = await startDemoCluster({ tmpDir: dir });
  browser = await launchChromium();
});
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await demo?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The sandbox's sponsor as the browser helpers take a node (its name, its running node). */
const sponsor = (): TestNode => ({ name: demo.a.name, node: demo.a.node }) as unknown as TestNode;
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe("pair demo's page on the demo's clock", () => {
  it("reads the idle timer and the history on the sandbox's clock, and follows it when moved", async () => {
    const virtualDate = dateOf(demo.hf.nowMs());
    const wallDate = dateOf(Date.now());
    expect(virtualDate).not.toBe(wallDate); // the sandbox runs months away: the test can tell them apart
    await demo.advance(0);
    const page = await signedInPage(browser, sponsor(), contexts, { timezoneId: "UTC" });
    await page.goto(`${demo.a.node.url}/ui/#/nodes/${NODE}`);
    const facts = page.locator("dl.facts");
    await poll(() => facts.innerText()).toMatch(
      /Idle timer\s+(under a second|\d+\.\d s|\d+ s|\d+ min \d\d s) since/,
    );
    expect(await facts.innerText()).not.toMatch(/\d+ h \d+ min since/);

    await demo.advance(3 * 60_000);
    await poll(() => facts.innerText()).toMatch(/Idle timer\s+3 min \d\d s since the last PAIR workload/);
    // Past the demo's idle_pause_min (5): the idle pause, dated on the sandbox's clock.
    await demo.advance(3 * 60_000);
    const history = page.getByRole("region", { name: "State history" });
    const paused = history.locator('tr[data-state-change="paused"]').first();
    await poll(() => paused.innerText()).toMatch(
      new RegExp(`${virtualDate} \\d\\d:\\d\\d:\\d\\d[\\s\\S]*paused: no PAIR workload for the idle time`),
    );
    expect(await page.locator("main").innerText()).not.toContain(wallDate);
  });
});
