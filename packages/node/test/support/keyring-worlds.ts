/**
 * The hooks every test file with the real OS credential store and a throwaway CA repeats, written
 * once: before each test the Secret Service must answer (`requireSecretService`, which fails the test
 * saying how to run it) and the file's test CA exists (made once, also when tests run concurrently)
 * — `keyringCa`; and, with `keyringWorlds`, after each test every world it made is cleaned up, one
 * after the other, `beforeCleanup` first (e.g. clearing an emulator's faults, so a failed test does
 * not leave the exit stop in a storm).
 * Must not know: what a world is made of, what a test asserts.
 */

import { createTestCa, type TestCa } from "@pair/testkit";
import { afterEach, beforeEach } from "vitest";
import { requireSecretService } from "../credentials/secret-service.js";

export interface KeyringCa {
  /** The file's test CA; made before the first test (reading it at module load throws). */
  readonly ca: TestCa;
}

export interface KeyringWorlds<W> extends KeyringCa {
  /** Cleans `w` up after the current test; returns it. */
  add<T extends W>(w: T): T;
}

/**
 * Registers the calling file's `beforeEach` (Secret Service, the CA); call it at the top level of a
 * test file whose tests clean up after themselves another way.
 */
export function keyringCa(): KeyringCa {
  let made: Promise<TestCa> | undefined;
  let ca: TestCa | undefined;
  beforeEach(async () => {
    await requireSecretService();
    made ??= createTestCa().catch((cause: unknown) => {
      made = undefined; // the next test tries again
      throw cause;
    });
    ca = await made;
  });
  return {
    get ca(): TestCa {
      if (ca === undefined)
        throw new Error("keyringCa: the test CA is made in beforeEach; read it in a test");
      return ca;
    },
  };
}

/** Registers the calling file's `beforeEach` and `afterEach`; call it at the top level of a test file. */
export function keyringWorlds<W extends { cleanup(): Promise<void> }>(
  beforeCleanup?: (w: W) => void,
): KeyringWorlds<W> {
  const keyring = keyringCa();
  const worlds: W[] = [];
  afterEach(async () => {
    for (const w of worlds.splice(0)) {
      beforeCleanup?.(w);
      await w.cleanup();
    }
  });
  return {
    get ca(): TestCa {
      return keyring.ca;
    },
    add(w) {
      worlds.push(w);
      return w;
    },
  };
}
