/**
 * Fault injection for the engine emulator: the fault set a test asks for, its checks, and the
 * seeded per-request decision. Decisions depend only on (seed, request index, fault kind), so a
 * failing run replays from its seed. Knows nothing of sockets: the server and the runner act on
 * the decision.
 */

import { EmulatorOptionError, checkedInt } from "./options.js";
import { unitDraw } from "./prng.js";

/** Each fault may act on every request (default) or, with `probability`, on a seeded share of them. */
export interface Probabilistic {
  /** Share of requests this fault acts on, in [0, 1] (default 1). */
  readonly probability?: number;
}

export interface EngineFaults {
  /** Stop listening (connections are refused) and drop open connections. Not probabilistic. */
  readonly refuseConnections?: boolean;
  /** Hold the request, send nothing, until the client leaves or the emulator closes. */
  readonly hangBeforeFirstByte?: boolean | Probabilistic;
  /** Answer with this status (and the dialect's error body) instead of generating. */
  readonly failBeforeFirstByte?: { readonly status: number } & Probabilistic;
  /** Destroy the socket after this many tokens were sent (streams) or generated (non-streaming). */
  readonly cutMidStream?: { readonly afterTokens: number } & Probabilistic;
  /** Seed of the probability draws (default 1). */
  readonly seed?: number;
}

/** What the emulator does to one request. */
export type FaultDecision =
  | { readonly kind: "none" }
  | { readonly kind: "hang" }
  | { readonly kind: "fail"; readonly status: number }
  | { readonly kind: "cut"; readonly afterTokens: number };

const NONE: FaultDecision = { kind: "none" };
const SALT = { hang: 1, fail: 2, cut: 3 } as const;

function checkedProbability(path: string, value: number | undefined): number {
  if (value === undefined) return 1;
  if (typeof value !== "number" || !(value >= 0 && value <= 1)) {
    throw new EmulatorOptionError(path, `expected a probability in [0, 1], got ${String(value)}`);
  }
  return value;
}

interface CheckedFaults {
  readonly refuseConnections: boolean;
  readonly hang: { readonly probability: number } | undefined;
  readonly fail: { readonly status: number; readonly probability: number } | undefined;
  readonly cut: { readonly afterTokens: number; readonly probability: number } | undefined;
  readonly seed: number;
}

/** Checks a fault set; throws EmulatorOptionError naming the bad field. */
export function checkFaults(faults: EngineFaults): CheckedFaults {
  const hang = faults.hangBeforeFirstByte;
  const fail = faults.failBeforeFirstByte;
  const cut = faults.cutMidStream;
  return {
    refuseConnections: faults.refuseConnections === true,
    hang:
      hang === undefined || hang === false
        ? undefined
        : {
            probability: checkedProbability(
              "faults.hangBeforeFirstByte.probability",
              hang === true ? undefined : hang.probability,
            ),
          },
    fail:
      fail === undefined
        ? undefined
        : {
            status: checkedInt("faults.failBeforeFirstByte.status", fail.status, 400, 599, 500),
            probability: checkedProbability("faults.failBeforeFirstByte.probability", fail.probability),
          },
    cut:
      cut === undefined
        ? undefined
        : {
            afterTokens: checkedInt("faults.cutMidStream.afterTokens", cut.afterTokens, 0, 1 << 30, 0),
            probability: checkedProbability("faults.cutMidStream.probability", cut.probability),
          },
    seed: checkedInt("faults.seed", faults.seed, 0, 0xffffffff, 1),
  };
}

/**
 * The active fault set and the count of requests decided under it. Setting faults restarts the
 * count, so "seed S, requests 0..n" always replays the same decisions.
 */
export class FaultInjector {
  #faults: CheckedFaults;
  #index = 0;

  constructor(faults: EngineFaults = {}) {
    this.#faults = checkFaults(faults);
  }

  set(faults: EngineFaults): void {
    this.#faults = checkFaults(faults);
    this.#index = 0;
  }

  get refuseConnections(): boolean {
    return this.#faults.refuseConnections;
  }

  get seed(): number {
    return this.#faults.seed;
  }

  /** Decides for the next request. Precedence when several act: hang, then fail, then cut. */
  decide(): FaultDecision {
    const { hang, fail, cut, seed } = this.#faults;
    const index = this.#index++;
    if (hang && unitDraw(seed, index, SALT.hang) < hang.probability) return { kind: "hang" };
    if (fail && unitDraw(seed, index, SALT.fail) < fail.probability)
      return { kind: "fail", status: fail.status };
    if (cut && unitDraw(seed, index, SALT.cut) < cut.probability)
      return { kind: "cut", afterTokens: cut.afterTokens };
    return NONE;
  }
}
