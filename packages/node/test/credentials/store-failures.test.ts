// How OsCredentialStore turns what the platform does into errors, with a stand-in for the library
// (no Secret Service needed): every platform failure is credential_unavailable with what to do and
// never the secret; a locked keyring is an error, not "absent"; a store that does not answer is
// bounded; listing keeps names only.
import { describe, expect, it } from "vitest";
import { Redacted } from "@pair/cluster";
import {
  CredentialError,
  OsCredentialStore,
  type KeyringBinding,
  type KeyringEntry,
} from "../../src/credentials/index.js";

const ref = { service: "pair", account: "hf" };
const SECRET = "hf_TopSecretTokenValue0123456789";

/** A library whose every call does `behave` (entries) or `find` (listing). */
function fakeKeyring(
  behave: (call: keyof KeyringEntry, service: string, account: string) => Promise<unknown>,
  find: (service: string) => Promise<{ account: string; password: string }[]> = () => Promise.resolve([]),
  created: { options?: unknown }[] = [],
): KeyringBinding {
  class Entry implements KeyringEntry {
    constructor(
      readonly service: string,
      readonly account: string,
      options?: unknown,
    ) {
      created.push({ options });
    }
    setSecret(): Promise<void> {
      return behave("setSecret", this.service, this.account) as Promise<void>;
    }
    getSecret(): Promise<number[] | null> {
      return behave("getSecret", this.service, this.account) as Promise<number[] | null>;
    }
    deleteCredential(): Promise<boolean> {
      return behave("deleteCredential", this.service, this.account) as Promise<boolean>;
    }
  }
  return { AsyncEntry: Entry, findCredentialsAsync: find };
}

function storeWith(keyring: KeyringBinding, platform: NodeJS.Platform = "linux", callTimeoutMs = 5_000) {
  return new OsCredentialStore({ platform, callTimeoutMs, loadKeyring: () => Promise.resolve(keyring) });
}

async function failure(promise: Promise<unknown>): Promise<CredentialError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CredentialError);
  return error as CredentialError;
}

const reject = (message: string) => () => Promise.reject(new Error(message));

describe("Linux failures become credential_unavailable with what to do", () => {
  it.each([
    [
      "no session bus",
      "Platform failure: DBus error: Using X11 for dbus-daemon autolaunch was disabled at compile time, set your DBUS_SESSION_BUS_ADDRESS instead",
      /no D-Bus session bus answers.*dbus-run-session -- sh -c .*gnome-keyring-daemon --unlock --components=secrets/,
    ],
    [
      "a dead bus socket",
      "Platform failure: DBus error: Failed to connect to socket /run/x/bus: No such file or directory",
      /no D-Bus session bus answers.*Debian packages: gnome-keyring dbus/,
    ],
    [
      "no provider",
      "Platform failure: DBus error: The name org.freedesktop.secrets was not provided by any .service files",
      /no Secret Service with a usable keyring.*gnome-keyring-daemon --unlock/,
    ],
    [
      "no default keyring",
      "Couldn't access platform storage: Secret Service: no result found",
      /no Secret Service with a usable keyring/,
    ],
    [
      "a dismissed unlock prompt",
      "Couldn't access platform storage: Secret Service: unlock prompt was dismissed",
      /the keyring is locked.*Unlock it/,
    ],
    [
      "a locked item while listing",
      "zbus error: org.freedesktop.Secret.Error.IsLocked: Cannot get secret of a locked object",
      /the keyring is locked/,
    ],
    [
      "anything else",
      "Platform failure: something odd",
      /the Secret Service failed .*Check that the keyring/,
    ],
  ])("%s", async (_name, message, advice) => {
    const store = storeWith(fakeKeyring(reject(message), reject(message)));
    for (const call of [
      () => store.get(ref),
      () => store.set(ref, new Redacted(SECRET, "t")),
      () => store.delete(ref),
      () => store.list(),
    ]) {
      const error = await failure(call());
      expect(error.code).toBe("credential_unavailable");
      expect(error.retryable).toBe(false);
      expect(error.message).toMatch(/^credential_unavailable: cannot (read|store|delete|list) /);
      expect(error.message).toMatch(advice);
      expect(error.message).toContain(message.slice(0, 40));
      expect(error.message).not.toContain(SECRET);
    }
  });

  it("an entry that cannot even be opened (the library throws in its constructor) is the same error", async () => {
    const keyring = fakeKeyring(() => Promise.resolve(null));
    const throwing: KeyringBinding = {
      ...keyring,
      AsyncEntry: class {
        constructor() {
          throw new Error("Platform failure: DBus error: Failed to connect to socket /x: Connection refused");
        }
      } as unknown as KeyringBinding["AsyncEntry"],
    };
    const error = await failure(storeWith(throwing).get(ref));
    expect(error.message).toMatch(/cannot read os-credential-store:pair\/hf .*no D-Bus session bus/);
  });

  it("a message that would repeat the secret has it cut out", async () => {
    const store = storeWith(
      fakeKeyring((call) =>
        call === "setSecret" ? reject(`bad value ${SECRET}!`)() : Promise.resolve(null),
      ),
    );
    const error = await failure(store.set(ref, new Redacted(SECRET, "t")));
    expect(error.message).not.toContain(SECRET);
    expect(error.message).toContain("bad value [redacted]!");
    expect(String((error.cause as Error).message)).toContain(SECRET); // the cause is kept for debugging only
  });

  it("pins the Secret Service on Linux and leaves the default store elsewhere", async () => {
    const linux: { options?: unknown }[] = [];
    await storeWith(
      fakeKeyring(() => Promise.resolve(null), undefined, linux),
      "linux",
    ).get(ref);
    expect(linux[0]?.options).toEqual({ linux: { store: "secret-service" } });
    const mac: { options?: unknown }[] = [];
    await storeWith(
      fakeKeyring(() => Promise.resolve(null), undefined, mac),
      "darwin",
    ).get(ref);
    expect(mac[0]?.options).toBeUndefined();
  });

  it.each([
    ["darwin", /macOS Keychain failed .*Unlock the login keychain/],
    ["win32", /Windows Credential Manager failed/],
    ["freebsd", /this platform \(freebsd\) failed/],
  ] as const)("%s failures name that platform's store", async (platform, advice) => {
    const error = await failure(storeWith(fakeKeyring(reject("Platform failure: x")), platform).get(ref));
    expect(error.code).toBe("credential_unavailable");
    expect(error.message).toMatch(advice);
  });
});

describe("answers that would hide a failure", () => {
  it("delete of an entry in a locked keyring is an error, not false (the read fails first)", async () => {
    const calls: string[] = [];
    const store = storeWith(
      fakeKeyring((call) => {
        calls.push(call);
        return call === "getSecret"
          ? reject("Couldn't access platform storage: Secret Service: unlock prompt was dismissed")()
          : Promise.resolve(false);
      }),
    );
    const error = await failure(store.delete(ref));
    expect(error.message).toMatch(/cannot read os-credential-store:pair\/hf .*locked/);
    expect(calls).toEqual(["getSecret"]);
  });

  it("delete of an absent entry answers false without deleting anything", async () => {
    const calls: string[] = [];
    const store = storeWith(
      fakeKeyring((call) => {
        calls.push(call);
        return Promise.resolve(call === "getSecret" ? null : true);
      }),
    );
    expect(await store.delete(ref)).toBe(false);
    expect(calls).toEqual(["getSecret"]);
  });

  it("a store that does not answer fails within callTimeoutMs", async () => {
    const store = storeWith(
      fakeKeyring(() => new Promise(() => undefined)),
      "linux",
      150,
    );
    const started = performance.now();
    const error = await failure(store.get(ref));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(error.message).toMatch(/did not answer within 0\.15 s .*unlock prompt may be waiting/);
  });

  it("a library that does not load is credential_unavailable, and the next call tries again", async () => {
    let loads = 0;
    const store = new OsCredentialStore({
      platform: "linux",
      loadKeyring: () => {
        loads += 1;
        return Promise.reject(new Error("Cannot find native binding"));
      },
    });
    const error = await failure(store.list());
    expect(error.message).toMatch(
      /@napi-rs\/keyring\) does not load on this machine.*Cannot find native binding/,
    );
    await failure(store.list());
    expect(loads).toBe(2);
  });

  it("an entry holding bytes that are not UTF-8 says to store it again", async () => {
    const store = storeWith(fakeKeyring(() => Promise.resolve([0xff, 0xfe, 0x41])));
    const error = await failure(store.get(ref));
    expect(error.message).toMatch(/not UTF-8 text .*pair credential set pair\/hf/);
  });

  it("listing keeps account names only and drops the secrets the library hands back", async () => {
    const store = storeWith(
      fakeKeyring(
        () => Promise.resolve(null),
        (service) =>
          Promise.resolve(
            service === "pair"
              ? [
                  { account: "hf", password: SECRET },
                  { account: ".credential-index", password: "{}" },
                  { account: "hf", password: SECRET },
                ]
              : [],
          ),
      ),
    );
    const listed = await store.list();
    expect(listed).toEqual([{ service: "pair", account: "hf" }]);
    expect(JSON.stringify(listed)).not.toContain(SECRET);
  });
});

describe("a Secret Service that drops a call (gnome-keyring crashed) is asked again", () => {
  const DROPPED =
    "zbus fdo error: org.freedesktop.DBus.Error.NoReply: Message recipient disconnected from message bus without replying";
  const RESTARTING =
    "zbus error: org.freedesktop.DBus.Error.ServiceUnknown: The name org.freedesktop.secrets was not provided by any .service files";

  /**
   * A library that fails each call with the next of `failures`, then answers `answer` (an entry's
   * call) or no credentials (a listing).
   */
  function flaky(failures: string[], answer: unknown, calls: string[]): KeyringBinding {
    const next = (call: string): Promise<unknown> => {
      calls.push(call);
      const failure = failures.shift();
      if (failure !== undefined) return Promise.reject(new Error(failure));
      return Promise.resolve(call === "find" ? [] : answer);
    };
    return fakeKeyring(
      (call) => next(call),
      () => next("find") as Promise<{ account: string; password: string }[]>,
    );
  }

  const quick = (keyring: KeyringBinding, platform: NodeJS.Platform = "linux") =>
    new OsCredentialStore({
      platform,
      retryDelaysMs: [0, 0, 0],
      loadKeyring: () => Promise.resolve(keyring),
    });

  it("a read dropped once is made again and answers", async () => {
    const calls: string[] = [];
    const secret = quick(flaky([DROPPED], [...new TextEncoder().encode("tok")], calls)).get(ref);
    expect((await secret)?.reveal()).toBe("tok");
    expect(calls).toEqual(["getSecret", "getSecret"]);
  });

  it("a store and a list dropped once, then told there is no service while it restarts, go through", async () => {
    const calls: string[] = [];
    await quick(flaky([DROPPED, RESTARTING], undefined, calls)).set(ref, new Redacted(SECRET, "t"));
    expect(calls).toEqual(["setSecret", "setSecret", "setSecret"]);
    calls.length = 0;
    // The index read answers null, then the listing of service pair is dropped, then answers.
    const store = quick(flaky([DROPPED], null, calls));
    expect(await store.list()).toEqual([]);
    expect(calls).toEqual(["getSecret", "getSecret", "find"]);
  });

  it.each([
    [
      "a session the new keyring does not know",
      "Platform failure: DBus error: The session wrapping the secret does not exist",
    ],
    [
      "a session the new keyring does not know (read)",
      "Platform failure: DBus error: The session does not exist",
    ],
    [
      "an item path of the old keyring",
      "zbus error: org.freedesktop.DBus.Error.UnknownMethod: Object does not exist at path “/org/freedesktop/secrets/collection/login/17”",
    ],
    [
      "an item path that no longer has the item interface",
      "zbus error: org.freedesktop.DBus.Error.UnknownMethod: No such interface “org.freedesktop.Secret.Item” on object at path /org/freedesktop/secrets/collection/login/145",
    ],
  ])(
    "%s (the keyring restarted, or the item was deleted meanwhile) is asked again",
    async (_name, message) => {
      const calls: string[] = [];
      expect(await quick(flaky([message], null, calls)).get(ref)).toBeUndefined();
      expect(calls).toEqual(["getSecret", "getSecret"]);
    },
  );

  it("no service on the first try is not a crash: one call, and the no-provider advice", async () => {
    const calls: string[] = [];
    const error = await failure(quick(flaky([RESTARTING], null, calls)).get(ref));
    expect(calls).toEqual(["getSecret"]);
    expect(error.message).toMatch(/no Secret Service with a usable keyring/);
  });

  it("a Secret Service that keeps dropping the call fails after the last repeat, saying how often PAIR tried", async () => {
    const calls: string[] = [];
    const error = await failure(
      quick(flaky([DROPPED, DROPPED, RESTARTING, DROPPED, DROPPED], null, calls)).set(
        ref,
        new Redacted(SECRET, "t"),
      ),
    );
    expect(calls).toHaveLength(4);
    expect(error.code).toBe("credential_unavailable");
    expect(error.message).toMatch(
      /^credential_unavailable: cannot store os-credential-store:pair\/hf in the OS credential store: the Secret Service quit while answering \(it crashed or was stopped\) \(.*disconnected from message bus without replying; PAIR tried 4 times\)\. Check that the keyring is running/,
    );
    expect(error.message).not.toContain(SECRET);
  });

  it("a dropped call on the first try alone also names the crash", async () => {
    const error = await failure(
      new OsCredentialStore({
        platform: "linux",
        retryDelaysMs: [],
        loadKeyring: () => Promise.resolve(flaky([DROPPED], null, [])),
      }).get(ref),
    );
    expect(error.message).toMatch(/the Secret Service quit while answering/);
    expect(error.message).not.toMatch(/PAIR tried/);
  });

  it("only the Secret Service is asked again: a dropped call on another platform fails at once", async () => {
    const calls: string[] = [];
    await failure(quick(flaky([DROPPED], null, calls), "darwin").get(ref));
    expect(calls).toEqual(["getSecret"]);
  });

  it("the repeats stay within the call's time limit and stop with it", async () => {
    const calls: string[] = [];
    const store = new OsCredentialStore({
      platform: "linux",
      callTimeoutMs: 150,
      retryDelaysMs: [60, 60, 60, 60, 60],
      loadKeyring: () => Promise.resolve(flaky(Array<string>(10).fill(DROPPED), null, calls)),
    });
    const error = await failure(store.get(ref));
    expect(error.message).toMatch(/did not answer within 0\.15 s/);
    const made = calls.length;
    expect(made).toBeGreaterThanOrEqual(2);
    expect(made).toBeLessThanOrEqual(4);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(calls).toHaveLength(made); // the repeat that was waiting is not made
  });

  it.each([[[-1]], [[1.5]], [[600_001]]])("retryDelaysMs %j is refused", (retryDelaysMs) => {
    expect(() => new OsCredentialStore({ retryDelaysMs })).toThrow(/retryDelaysMs: expected whole numbers/);
  });
});

describe("limits and names", () => {
  const store = storeWith(fakeKeyring(() => Promise.resolve(null)));

  it.each([99, 600_001, 1.5])("callTimeoutMs %s is refused", (callTimeoutMs) => {
    expect(() => new OsCredentialStore({ callTimeoutMs })).toThrow(/callTimeoutMs: expected a whole number/);
  });

  it("refuses an empty or oversized secret without repeating it", async () => {
    await expect(store.set(ref, new Redacted("", "t"))).rejects.toThrow(/1 to 65536 bytes of UTF-8, got 0/);
    const big = "x".repeat(65_537);
    const error = await store.set(ref, new Redacted(big, "t")).then(
      () => new Error("stored"),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(RangeError);
    expect(error.message).toMatch(/got 65537/);
    expect(error.message.length).toBeLessThan(200);
  });

  it.each([
    { service: "pair", account: ".credential-index" },
    { service: "", account: "x" },
    { service: "pair", account: "a/b" },
    { service: "pair", account: "hf_abcdefghijklmnopqrstuvwxyz" },
  ])("refuses a reference config could not name: %j", async (bad) => {
    await expect(store.get(bad)).rejects.toThrow(RangeError);
  });
});
