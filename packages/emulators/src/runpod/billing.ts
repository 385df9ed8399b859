/**
 * The billing meter: what each pod has cost so far, exactly as the emulated provider would charge.
 * Billing is per second: each whole second of the (virtual) clock that passes while a pod is in a
 * billed state charges that state's rate for one second. Rates are integers in micro-USD per
 * 30-day month (720 h) so GPU-hour and GB-month prices share one unit and sums stay exact (bigint).
 * Reference §4: compute (GPU price × count) while PROVISIONING/STARTING/RUNNING; container disk
 * and pod volume at $0.10/GB/month alongside it; only the volume, at $0.20/GB/month, while
 * EXITED (or ERROR); nothing once TERMINATED.
 * Must not know: HTTP, the pod state machine (it is told the rates), engines.
 */

export const HOURS_PER_MONTH = 720;
const SECONDS_PER_MONTH = BigInt(HOURS_PER_MONTH * 3600);

/** Storage prices of the reference (§4), micro-USD per GB-month. */
export const RUNNING_DISK_MICRO_USD_PER_GB_MONTH = 100_000;
export const STOPPED_VOLUME_MICRO_USD_PER_GB_MONTH = 200_000;

/** What one pod is charged per month of its current state, split by kind. */
export interface BillingRates {
  readonly computeMicroUsdPerMonth: number;
  readonly storageMicroUsdPerMonth: number;
}

export const NOT_BILLED: BillingRates = { computeMicroUsdPerMonth: 0, storageMicroUsdPerMonth: 0 };

export interface PodCharges {
  readonly computeMicroUsd: number;
  readonly storageMicroUsd: number;
  readonly totalMicroUsd: number;
  /** Billed seconds in a compute-billed state. */
  readonly computeSeconds: number;
}

interface Account {
  compute: bigint; // micro-USD-per-month × seconds
  storage: bigint;
  computeSeconds: number;
}

/** Whole seconds of the clock that pass in [fromMs, toMs): the ticks billed for that span. */
export function billedSeconds(fromMs: number, toMs: number): number {
  return toMs <= fromMs ? 0 : Math.floor(toMs / 1000) - Math.floor(fromMs / 1000);
}

export class BillingMeter {
  readonly #accounts = new Map<string, Account>();

  /** Charges a pod for the span [fromMs, toMs) at the given rates. */
  accrue(podId: string, rates: BillingRates, fromMs: number, toMs: number): void {
    const seconds = billedSeconds(fromMs, toMs);
    const account = this.#accounts.get(podId) ?? { compute: 0n, storage: 0n, computeSeconds: 0 };
    this.#accounts.set(podId, account);
    if (seconds === 0) return;
    account.compute += BigInt(rates.computeMicroUsdPerMonth) * BigInt(seconds);
    account.storage += BigInt(rates.storageMicroUsdPerMonth) * BigInt(seconds);
    if (rates.computeMicroUsdPerMonth > 0) account.computeSeconds += seconds;
  }

  /** What a pod has cost so far, in micro-USD (rounded down); 0 for a pod never billed. */
  totalMicroUsd(podId: string): number {
    return this.charges(podId).totalMicroUsd;
  }

  charges(podId: string): PodCharges {
    const account = this.#accounts.get(podId);
    if (!account) return { computeMicroUsd: 0, storageMicroUsd: 0, totalMicroUsd: 0, computeSeconds: 0 };
    return {
      computeMicroUsd: Number(account.compute / SECONDS_PER_MONTH),
      storageMicroUsd: Number(account.storage / SECONDS_PER_MONTH),
      totalMicroUsd: Number((account.compute + account.storage) / SECONDS_PER_MONTH),
      computeSeconds: account.computeSeconds,
    };
  }

  /** Every pod ever billed (terminated ones included), by id. */
  podIds(): string[] {
    return [...this.#accounts.keys()];
  }

  /** The sum over every pod, in micro-USD (rounded down once, not per pod). */
  grandTotalMicroUsd(): number {
    let sum = 0n;
    for (const account of this.#accounts.values()) sum += account.compute + account.storage;
    return Number(sum / SECONDS_PER_MONTH);
  }
}
