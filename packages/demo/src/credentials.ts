/**
 * The demo sandbox's credential source: an in-memory map from credential reference to a generated
 * token for the emulated Hugging Face account, handed to the demo's sponsor node as its
 * `credentials` option. It exists only inside `pair demo` — no config key, flag or environment
 * variable selects it — so the demo runs where no OS Secret Service does, and a real node always
 * reads the OS credential store. The tokens are made at run time and die with the process.
 * Must not know: the OS credential store, the nodes, what the tokens open.
 */

import type { CredentialReader, CredentialRef, Redacted } from "@pair/node";

/** The service name every sandbox credential lives under, so it reads as what it is. */
export const DEMO_CREDENTIAL_SERVICE = "pair-demo-sandbox";

export function demoCredentialRef(account: string): string {
  return `os-credential-store:${DEMO_CREDENTIAL_SERVICE}/${account}`;
}

export class DemoSandboxCredentials implements CredentialReader {
  readonly #secrets = new Map<string, Redacted<string>>();

  set(account: string, secret: Redacted<string>): void {
    this.#secrets.set(account, secret);
  }

  get(ref: CredentialRef): Promise<Redacted<string> | undefined> {
    return Promise.resolve(
      ref.service === DEMO_CREDENTIAL_SERVICE ? this.#secrets.get(ref.account) : undefined,
    );
  }
}
