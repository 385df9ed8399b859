/**
 * The hooks every test file with the real OS credential store and a throwaway CA repeats, written
 * once: before each test the Secret Service must answer (`requireSecretService`, which fails the test
 * saying how to run it) and the file's test CA exists (made once); after each test every world it
 * made is cleaned up, one after the other, `beforeCleanup` first (e.g. clearing an emulator's faults,
 * so a failed test does not leave the exit stop in a storm).
 * Must not know: what a world is made of, what a test asserts.
 */

import { createTestCa, type TestCa } from "@pair/testkit";
import { afterEach, beforeEach } from "vitest";
import { requireSecretService } from "../credentials/secret-service.js";

export interface KeyringWorlds<W> {
  /** The file's test CA; made before the first test (reading it at module load throws). */
  readonly ca: TestCa;
  /** Cleans `w` up after the current test; returns it. */
  add(w: W): W;
}

/** Registers the calling file's `beforeEach` and `afterEach`; call it at the top level of a test file. */
export function keyringWorlds<W extends { cleanup(): Promise<void> }>(
  beforeCleanup?: (w: W) => void,
): KeyringWorlds<W> {
  let ca: TestCa | undefined;
  const worlds: W[] = [];
  beforeEach(async () => {
    await requireSecretService();
    ca ??= await createTestCa();
  });
  afterEach(async () => {
    for (const w of worlds.splice(0)) {
      beforeCleanup?.(w);
      await w.cleanup();
    }
  });
  return {
    get ca(): TestCa {
      if (ca === undefined)
        throw new Error("keyringWorlds: the test CA is made in beforeEach; read it in a test");
      return ca;
    },
    add(w) {
      worlds.push(w);
      return w;
    },
  };
}
