// The real OS credential store for tests: fail (never skip) when it is missing, and names unique to
// this run so reruns and parallel files do not collide.
import { randomBytes } from "node:crypto";
import { Redacted } from "@pair/cluster";
import type { CredentialRef } from "../../src/config/index.js";
import { CredentialError, OsCredentialStore } from "../../src/credentials/index.js";

const HOW =
  "The credential tests use the real OS credential store (the Secret Service on Linux). Run them " +
  "through `bash scripts/test.sh` — e.g. `bash scripts/test.sh packages/node/test/credentials` — which " +
  "starts a private D-Bus session and an unlocked gnome-keyring when this shell has none.";

/** A run-unique name part: `pair-test-<pid>-<hex>`. */
export function uniqueName(label: string): string {
  return `pair-test-${label}-${process.pid}-${randomBytes(4).toString("hex")}`;
}

let checked: Promise<void> | undefined;

/**
 * Throws, so each test fails saying what to do, unless a round trip through the real store works.
 * Call it in `beforeEach` (a `beforeAll` failure would leave the tests counted as skipped); the
 * check runs once per file.
 */
export function requireSecretService(): Promise<void> {
  checked ??= checkSecretService();
  return checked;
}

async function checkSecretService(): Promise<void> {
  if (process.platform === "linux" && !process.env.DBUS_SESSION_BUS_ADDRESS)
    throw new Error(`No Secret Service: DBUS_SESSION_BUS_ADDRESS is not set. ${HOW}`);
  const store = new OsCredentialStore({ callTimeoutMs: 10_000 });
  const ref: CredentialRef = { service: "pair", account: uniqueName("probe") };
  try {
    await store.set(ref, new Redacted("probe", "probe"));
    const back = await store.get(ref);
    await store.delete(ref);
    if (back?.reveal() !== "probe") throw new Error("the store did not give back what was stored");
  } catch (error) {
    const what = error instanceof CredentialError ? error.message : String(error);
    throw new Error(`No usable Secret Service (${what}). ${HOW}`, { cause: error });
  }
}
