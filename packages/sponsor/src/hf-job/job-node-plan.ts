/**
 * The plan of a managed `huggingface-job` node (a batch window), as pure functions the sponsor calls:
 * the `job:` settings (repo, flavor, window, optional engine image and routing) checked with units
 * in the names, the DeploymentSpec the Jobs adapter creates (`vllm serve` with timeoutSeconds = the
 * window), the RentalWindow whose end obliges a `window-ended` stop, the routing use in force (`prefer`
 * for its models during the window unless configured otherwise, `never` once it ended), and the cost
 * basis (flavor price + the exposed-port surcharge per hour).
 * Wired by job-node.ts (the manager of one job node, configured or made by `pair rented create`).
 * Must not know: HTTP, the credential store, timers.
 */

import {
  EXPOSED_PORT_USD_PER_HOUR,
  HF_JOB_PROVIDER,
  MAX_WINDOW_S,
  MIN_WINDOW_S,
  type HfJobFlavor,
} from "@pair/huggingface";
import type { DeploymentSpec, RentalWindow } from "@pair/provision";
import type { RoutingUse } from "../config/index.js";
import type { CostBasis } from "../core/cost-estimate.js";

export interface JobNodeSettings {
  /** The model repository vLLM serves, e.g. `Qwen/Qwen3-0.6B`. */
  readonly repo: string;
  /** A Jobs flavor, e.g. `l4x1`. */
  readonly flavor: string;
  readonly windowMs: number;
  /** An image with `vllm` on the PATH (the adapter's default when absent). */
  readonly image?: string;
  /** Routing during the window (default `prefer`: the batch it was rented for). */
  readonly routingDuringWindow?: RoutingUse;
}

export function validateJobNodeSettings(settings: JobNodeSettings): string[] {
  const problems: string[] = [];
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/.test(settings.repo))
    problems.push(`job.repo: "${settings.repo}" is not a Hugging Face repository id (owner/name)`);
  if (!/^[a-z0-9][a-z0-9-]*$/.test(settings.flavor))
    problems.push(`job.flavor: "${settings.flavor}" is not a Jobs flavor (e.g. l4x1, a10g-small)`);
  const windowS = settings.windowMs / 1000;
  if (!Number.isInteger(windowS) || windowS < MIN_WINDOW_S || windowS > MAX_WINDOW_S)
    problems.push(
      `job.window: expected whole seconds between ${MIN_WINDOW_S} s and ${MAX_WINDOW_S / 3600} h`,
    );
  if (settings.image !== undefined && settings.image.trim() === "")
    problems.push("job.image: must not be empty");
  if (settings.routingDuringWindow === "never")
    problems.push("job.routing: never would rent a GPU for a window and send it nothing");
  return problems;
}

function checked(settings: JobNodeSettings): void {
  const problems = validateJobNodeSettings(settings);
  if (problems.length > 0) throw new RangeError(problems.join("; "));
}

/** What the Jobs adapter creates for this node (`name`: the node's name, a job label). */
export function jobDeploymentSpec(
  nodeName: string,
  namespace: string,
  settings: JobNodeSettings,
): DeploymentSpec {
  checked(settings);
  return {
    provider: HF_JOB_PROVIDER,
    account: namespace,
    name: nodeName,
    model: settings.repo,
    hardware: settings.flavor,
    settings: {
      windowS: settings.windowMs / 1000,
      ...(settings.image === undefined ? {} : { image: settings.image }),
    },
  };
}

/** The window, from when the create intent was sent (the provider's timeout runs later, from RUNNING). */
export function jobRentalWindow(intentSentAtMs: number, settings: JobNodeSettings): RentalWindow {
  checked(settings);
  return { startMs: intentSentAtMs, endMs: intentSentAtMs + settings.windowMs };
}

/** The routing use in force for the job node's models at `nowMs`. */
export function jobRoutingUse(window: RentalWindow, nowMs: number, settings: JobNodeSettings): RoutingUse {
  if (nowMs < window.startMs || nowMs >= window.endMs) return "never";
  return settings.routingDuringWindow ?? "prefer";
}

/** Hourly price while starting or running: the flavor's listed per-minute price × 60 + the port surcharge. */
export function jobCostBasis(flavor: HfJobFlavor): CostBasis {
  return { usdPerHour: flavor.usdPerMinute * 60 + EXPOSED_PORT_USD_PER_HOUR };
}
