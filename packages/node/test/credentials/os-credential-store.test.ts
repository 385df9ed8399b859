// OsCredentialStore against the real Secret Service (scripts/test.sh provides one): round trips,
// replace, delete, list of names (service `pair` and others through the index), and a fetched secret
// that stays masked. Only this file stores outside service `pair`, so no other test file races it on
// the shared index entry.
import { inspect } from "node:util";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { Redacted } from "@pair/cluster";
import type { CredentialRef } from "../../src/config/index.js";
import { OsCredentialStore } from "../../src/credentials/index.js";
import { requireSecretService, uniqueName } from "./secret-service.js";

const store = new OsCredentialStore({ callTimeoutMs: 10_000 });
const service = uniqueName("svc");
const secret = (text: string) => new Redacted(text, "test secret");
const made: CredentialRef[] = [];
function ref(service: string, account: string): CredentialRef {
  const r = { service, account };
  made.push(r);
  return r;
}

beforeEach(requireSecretService);
afterAll(async () => {
  for (const r of made) await store.delete(r).catch(() => false);
});

describe("the real OS credential store", () => {
  it("stores, reads back, replaces and deletes a secret", async () => {
    const r = ref(service, "alice");
    expect(await store.get(r)).toBeUndefined();
    await store.set(r, secret("hf_first-Secret-value"));
    expect((await store.get(r))?.reveal()).toBe("hf_first-Secret-value");
    await store.set(r, secret("second ✓ é"));
    expect((await store.get(r))?.reveal()).toBe("second ✓ é");
    expect(await store.delete(r)).toBe(true);
    expect(await store.get(r)).toBeUndefined();
    expect(await store.delete(r)).toBe(false);
  });

  it("keeps accounts and services apart", async () => {
    const a = ref(service, "a");
    const b = ref(`${service}-other`, "a");
    await store.set(a, secret("secret-a"));
    await store.set(b, secret("secret-b"));
    expect((await store.get(a))?.reveal()).toBe("secret-a");
    expect((await store.get(b))?.reveal()).toBe("secret-b");
    await store.delete(a);
    expect((await store.get(b))?.reveal()).toBe("secret-b");
    await store.delete(b);
  });

  it("lists names only — of service pair and of other services PAIR stored — sorted, without the index", async () => {
    const own = ref("pair", uniqueName("own"));
    const other1 = ref(service, "zed");
    const other2 = ref(service, "bob");
    for (const r of [own, other1, other2]) await store.set(r, secret(`value-of-${r.account}-Xy9`));
    const listed = await store.list();
    expect(listed).toEqual(expect.arrayContaining([own, other1, other2]));
    const mine = listed.filter((r) => r.service === service);
    expect(mine).toEqual([other2, other1]);
    expect(listed.every((r) => /^[A-Za-z0-9]/.test(r.account))).toBe(true);
    expect(JSON.stringify(listed)).not.toMatch(/value-of-/);

    await store.delete(other2);
    await store.delete(own);
    const after = await store.list();
    expect(after).toContainEqual(other1);
    expect(after).not.toContainEqual(other2);
    expect(after).not.toContainEqual(own);
    await store.delete(other1);
    expect((await store.list()).filter((r) => r.service === service)).toEqual([]);
  });

  it("a fetched secret shows a mask in inspect, JSON, String and templates", async () => {
    const r = ref(service, "masked");
    const text = "hf_MaskMeIfYouCan0123456789";
    await store.set(r, secret(text));
    const fetched = await store.get(r);
    expect(fetched?.reveal()).toBe(text);
    for (const shown of [
      inspect(fetched),
      inspect({ nested: { fetched } }, { depth: 5 }),
      JSON.stringify({ fetched }),
      String(fetched),
      `${String(fetched)}`,
    ]) {
      expect(shown).not.toContain(text);
      expect(shown).toContain(`[redacted credential ${service}/masked]`);
    }
    await store.delete(r);
  });
});
