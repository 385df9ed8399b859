/**
 * A failure of the platform's credential store turned into a `credential_unavailable` that says what
 * failed and what to do: no D-Bus session bus, no Secret Service provider, a locked keyring or a
 * dismissed unlock prompt (Linux), the Keychain (macOS), Credential Manager (Windows), no answer in
 * time, a native library that does not load. The platform's own text is kept as a detail — it
 * describes D-Bus and keychains, never a secret — and any text given as `secrets` is cut out anyway.
 * Must not know: the library's API, the command line.
 */

import { CredentialError } from "./credential-error.js";

/** What PAIR was doing when the store failed, as the message says it. */
export type CredentialOperation =
  "read" | "store" | "delete" | "list" | "reach"; /* loading the library, opening an entry */

/** Debian packages that give a headless Linux machine a Secret Service. */
export const SECRET_SERVICE_PACKAGES = "gnome-keyring dbus";

/** How to run a Secret Service without a desktop; README "Credentials" has the longer version. */
export const HEADLESS_RECIPE =
  "on a machine without a desktop, run pair inside a session bus with an unlocked gnome-keyring " +
  `(Debian packages: ${SECRET_SERVICE_PACKAGES}): dbus-run-session -- sh -c 'printf %s "$KEYRING_PASSWORD" | ` +
  "gnome-keyring-daemon --unlock --components=secrets >/dev/null; pair …' (README, Credentials)";

const DETAIL_MAX_CHARS = 240;

type Kind = "no_bus" | "no_provider" | "locked" | "dropped" | "other";

/** The Secret Service client's text for a call the Secret Service dropped: it went away while answering. */
export const DROPPED_CALL = /disconnected from (the )?message bus without replying/i;

/** Which Linux failure the Secret Service client's text describes. */
function linuxKind(text: string): Kind {
  if (DROPPED_CALL.test(text)) return "dropped";
  if (
    /DBUS_SESSION_BUS_ADDRESS|Failed to connect|Connection refused|No such file or directory|Did not receive a reply|not connected|Could not connect|Broken pipe/i.test(
      text,
    )
  )
    return "no_bus";
  if (/IsLocked|locked|prompt was dismissed|prompt/i.test(text)) return "locked";
  if (
    /not provided by any \.service files|ServiceUnknown|no result found|NoSuchObject|No such interface/i.test(
      text,
    )
  )
    return "no_provider";
  return "other";
}

/** What went wrong, and what to do about it. */
function advice(platform: NodeJS.Platform, kind: Kind): { problem: string; todo: string } {
  if (platform === "darwin")
    return {
      problem: "the macOS Keychain failed",
      todo: "Unlock the login keychain (Keychain Access) and run the command again.",
    };
  if (platform === "win32")
    return {
      problem: "Windows Credential Manager failed",
      todo: "Sign in to the Windows account that runs PAIR and run the command again.",
    };
  if (platform !== "linux")
    return {
      problem: `the credential store of this platform (${platform}) failed`,
      todo: "PAIR supports the Secret Service (Linux), the macOS Keychain and Windows Credential Manager.",
    };
  switch (kind) {
    case "no_bus":
      return {
        problem: "no D-Bus session bus answers, so the Secret Service (the Linux keyring) cannot be reached",
        todo: `Run pair in a desktop session with an unlocked keyring; ${HEADLESS_RECIPE}.`,
      };
    case "no_provider":
      return {
        problem:
          "the session bus has no Secret Service with a usable keyring (gnome-keyring, KWallet or KeePassXC)",
        todo: `Start one with an unlocked default keyring; ${HEADLESS_RECIPE}.`,
      };
    case "locked":
      return {
        problem: "the keyring is locked (or its unlock prompt was dismissed)",
        todo:
          'Unlock it (log in to the desktop, or unlock "Login" in Passwords and Keys) and run the command ' +
          `again; ${HEADLESS_RECIPE}.`,
      };
    case "dropped":
      return {
        problem: "the Secret Service quit while answering (it crashed or was stopped)",
        todo: `Check that the keyring is running and unlocked, then run the command again; ${HEADLESS_RECIPE}.`,
      };
    case "other":
      return {
        problem: "the Secret Service failed",
        todo: `Check that the keyring is running and unlocked; ${HEADLESS_RECIPE}.`,
      };
  }
}

/** The platform's message, shortened, with every given secret cut out. */
function detailOf(error: unknown, secrets: readonly string[]): string {
  let text = error instanceof Error ? error.message : String(error);
  for (const secret of secrets) if (secret.length > 0) text = text.split(secret).join("[redacted]");
  text = text.replace(/\s+/g, " ").trim();
  return text.length > DETAIL_MAX_CHARS ? `${text.slice(0, DETAIL_MAX_CHARS)}…` : text;
}

/** The CredentialError for a failed call. `what` names the credential (`os-credential-store:pair/hf`) or the list. */
export function platformFailure(
  error: unknown,
  context: {
    readonly platform: NodeJS.Platform;
    readonly operation: CredentialOperation;
    readonly what: string;
    /** Texts that must not appear in the message (the secret being stored). */
    readonly secrets?: readonly string[];
    /** How many times the Secret Service dropped this call before (each one was made again). */
    readonly dropped?: number;
  },
): CredentialError {
  const dropped = context.dropped ?? 0;
  const detail = detailOf(error, context.secrets ?? []);
  const kind = context.platform === "linux" ? (dropped > 0 ? "dropped" : linuxKind(detail)) : "other";
  const verb = {
    read: "cannot read",
    store: "cannot store",
    delete: "cannot delete",
    list: "cannot list",
    reach: "cannot open",
  }[context.operation];
  const { problem, todo } = advice(context.platform, kind);
  const tries = dropped > 0 ? `; PAIR tried ${dropped + 1} times` : "";
  return new CredentialError(
    "credential_unavailable",
    `${verb} ${context.what} in the OS credential store: ${problem} (${detail}${tries}). ${todo}`,
    { cause: error },
  );
}

/** The CredentialError when the store does not answer within the call's time limit. */
export function storeTimeout(
  context: { readonly operation: CredentialOperation; readonly what: string },
  timeoutMs: number,
): CredentialError {
  return new CredentialError(
    "credential_unavailable",
    `the OS credential store did not answer within ${timeoutMs / 1000} s while PAIR tried to ${context.operation} ` +
      `${context.what}: an unlock prompt may be waiting on the desktop — answer it or unlock the keyring, ` +
      "then run the command again",
  );
}

/** The CredentialError when the native library itself cannot be loaded on this machine. */
export function libraryUnavailable(error: unknown, platform: NodeJS.Platform): CredentialError {
  return new CredentialError(
    "credential_unavailable",
    `the OS credential store library (@napi-rs/keyring) does not load on this machine (${platform}/${process.arch}): ` +
      `${detailOf(error, [])}; reinstall with \`npm ci\` on this machine, or run PAIR on a supported platform`,
    { cause: error },
  );
}
