/**
 * What the dashboard's browser tests share: a page signed in to a node through a login code (as
 * `pair ui` gets one), in a fresh browser profile the caller closes, and a poll with time for the
 * views' refreshes.
 * Must not know: what a test asserts.
 */

import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect } from "vitest";
import { admin, type TestNode } from "../../../node/test/cluster/node-pair-harness.js";

/** expect.poll with time for a refresh or two (the views poll every 1–1.5 s). */
export function poll<T>(read: () => Promise<T> | T, timeout = 15_000) {
  return expect.poll(read, { timeout, interval: 100 });
}

/** A page signed in to `node` at `width` px (its context pushed on `contexts`), with no page error. */
export async function signedInPage(
  browser: Browser,
  node: TestNode,
  contexts: BrowserContext[],
  options: { readonly width?: number; readonly timezoneId?: string } = {},
): Promise<Page> {
  const code = (await admin(node, "/pair/v1/ui/login-code", {})).json as { path: string };
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: 900 },
    ...(options.timezoneId === undefined ? {} : { timezoneId: options.timezoneId }),
  });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const errors: string[] = [];
  page.on("pageerror", (e) => void errors.push(e.message));
  await page.goto(`${node.node.url}${code.path}`);
  await page.getByRole("heading", { level: 1, name: `PAIR on ${node.name}` }).waitFor();
  expect(errors).toEqual([]);
  return page;
}
