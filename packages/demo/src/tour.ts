/**
 * The scripted tour of `pair demo`: the seed's validation steps 1–7 run against the two-node sandbox,
 * each printed as what the demo does (`$ …`, the command a user would type) and what the user sees
 * (`→ …`), ending in ✓ or ✗. A step's outcome is also data (`TourStep`), for `--json` and the tests.
 * A step that throws is reported as failed with the error's message; the tour goes on to the next.
 * A stop request (Ctrl-C) ends the tour between steps.
 * Must not know: how the sandbox is built (it drives it through DemoCluster), the command line.
 */

import type { DemoCluster } from "./cluster.js";
import { TOUR_STEPS } from "./tour-steps.js";

export interface TourStep {
  readonly step: number;
  readonly title: string;
  readonly ok: boolean;
  /** The facts the step established (names, codes, states, virtual durations). */
  readonly outcome: Record<string, unknown>;
}

/** What a step writes: an action (`$ …`), an observation (`→ …`), or a plain note. */
export interface TourPrinter {
  does(text: string): void;
  sees(text: string): void;
  note(text: string): void;
}

export interface TourStepSpec {
  readonly step: number;
  readonly title: string;
  /** Runs the step; returns its outcome and whether every expectation held. */
  run(cluster: DemoCluster, out: TourPrinter): Promise<{ ok: boolean; outcome: Record<string, unknown> }>;
}

export async function runTour(
  cluster: DemoCluster,
  write: (text: string) => void,
  steps: readonly TourStepSpec[] = TOUR_STEPS,
  /** Checked before each step: true ends the tour early (Ctrl-C). */
  stopRequested: () => boolean = () => false,
): Promise<TourStep[]> {
  const out: TourPrinter = {
    does: (text) => write(`  $ ${text}\n`),
    sees: (text) => write(`    → ${text}\n`),
    note: (text) => write(`  ${text}\n`),
  };
  const results: TourStep[] = [];
  for (const spec of steps) {
    if (stopRequested()) break;
    write(`\nStep ${spec.step} — ${spec.title}\n`);
    let result: { ok: boolean; outcome: Record<string, unknown> };
    try {
      result = await spec.run(cluster, out);
    } catch (error) {
      result = { ok: false, outcome: { error: error instanceof Error ? error.message : String(error) } };
      out.note(`the step failed: ${String(result.outcome["error"])}`);
    }
    write(
      `  ${result.ok ? "✓" : "✗"} step ${spec.step} ${result.ok ? "shown" : "did not turn out as the seed says"}\n`,
    );
    results.push({ step: spec.step, title: spec.title, ...result });
  }
  return results;
}
