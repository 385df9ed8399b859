/**
 * Requests an emulator's fault switch holds unanswered until the test releases them, shared by the
 * Hugging Face and Runpod control planes: the server parks a held request here, a test waits until
 * one is held (to SIGKILL a client while it hangs), then releases them all — carried out ("apply")
 * or dropped unapplied ("drop").
 * Must not know: HTTP, which requests are held, what carrying one out means.
 */

/** What happens to held requests when released: carried out (and answered if the client still waits), or dropped. */
export type HeldRelease = "apply" | "drop";

/** When a held request's action happens: at once, only its answer held; or only if released with "apply". */
export type HeldApplied = "before-answer" | "on-release";

export class HeldRequests {
  #held: ((how: HeldRelease) => void)[] = [];
  #waiters: (() => void)[] = [];

  /** Requests currently held. */
  get count(): number {
    return this.#held.length;
  }

  /** Resolves once at least one request is held. */
  async whenHeld(): Promise<void> {
    if (this.#held.length > 0) return;
    await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  /** Releases every held request; how many there were. */
  release(how: HeldRelease): number {
    const held = this.#held.splice(0);
    for (const resume of held) resume(how);
    return held.length;
  }

  /** The server parks a held request here; resolves with how it was released. */
  park(): Promise<HeldRelease> {
    const released = new Promise<HeldRelease>((resolve) => this.#held.push(resolve));
    for (const wake of this.#waiters.splice(0)) wake();
    return released;
  }
}
