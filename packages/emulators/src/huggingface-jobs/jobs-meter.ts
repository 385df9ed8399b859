/**
 * What Hugging Face would charge for Jobs: for each job, every started minute of its RUNNING
 * stretch × (flavor price + the exposed-port surcharge when it exposes a port) / 60. Read on the
 * emulator's clock, so a running job counts up to "now".
 * Must not know: HTTP, how stages change (the world opens and closes stretches).
 */

const MINUTE_MS = 60_000;

export interface JobStretch {
  readonly namespace: string;
  readonly jobId: string;
  readonly startMs: number;
  /** Undefined while the job runs. */
  readonly endMs: number | undefined;
  readonly flavorPerHour: number;
  readonly surchargePerHour: number;
}

export class JobsMeter {
  readonly #now: () => number;
  readonly #stretches: { -readonly [K in keyof JobStretch]: JobStretch[K] }[] = [];

  constructor(now: () => number) {
    this.#now = now;
  }

  open(
    namespace: string,
    jobId: string,
    atMs: number,
    flavorPerHour: number,
    surchargePerHour: number,
  ): void {
    this.#stretches.push({
      namespace,
      jobId,
      startMs: atMs,
      endMs: undefined,
      flavorPerHour,
      surchargePerHour,
    });
  }

  close(jobId: string, atMs: number): void {
    for (const stretch of this.#stretches)
      if (stretch.jobId === jobId && stretch.endMs === undefined) stretch.endMs = atMs;
  }

  stretches(): JobStretch[] {
    return this.#stretches.map((stretch) => ({ ...stretch }));
  }

  #select(namespace: string, jobId: string | undefined) {
    return this.#stretches.filter(
      (stretch) => stretch.namespace === namespace && (jobId === undefined || stretch.jobId === jobId),
    );
  }

  /** Started minutes billed to a namespace, or to one job. */
  billedMinutes(namespace: string, jobId?: string): number {
    const now = this.#now();
    return this.#select(namespace, jobId).reduce(
      (sum, stretch) => sum + Math.ceil(((stretch.endMs ?? now) - stretch.startMs) / MINUTE_MS),
      0,
    );
  }

  /** Micro-USD: Σ started minutes × (flavor + surcharge) per hour / 60, rounded once. */
  totalMicroUsd(namespace: string, jobId?: string): number {
    const now = this.#now();
    const exact = this.#select(namespace, jobId).reduce((sum, stretch) => {
      const minutes = Math.ceil(((stretch.endMs ?? now) - stretch.startMs) / MINUTE_MS);
      const perHourMicro = Math.round((stretch.flavorPerHour + stretch.surchargePerHour) * 1e6);
      return sum + (minutes * perHourMicro) / 60;
    }, 0);
    return Math.round(exact);
  }
}
