/**
 * Debian's Chromium driven by playwright-core (stack-notes.md §6): headless, no sandbox (tests run
 * as root in CI), nothing fetched from the network. Fails, saying what to install, when it is missing.
 * Must not know: PAIR.
 */

import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = process.env["PAIR_CHROMIUM"] ?? "/usr/bin/chromium";

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `No Chromium at ${CHROMIUM}: the dashboard's browser tests drive Debian's Chromium. Install it ` +
        "(apt-get install -y chromium) or point PAIR_CHROMIUM at a Chromium binary.",
    );
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
