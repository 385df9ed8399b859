/**
 * `pair rented resume NAME`: the node starts the resume and answers at once; the CLI then follows the
 * node's row each second as a live line — state, time since the resume, cost so far (live-line.ts) —
 * until it runs with its model listed, fails, or rests in a state that wakes on request.
 * Must not know: how the node resumes anything, how the final row is printed.
 */

import type { CliIo } from "./cli-io.js";
import { rentedCall } from "./rented-call.js";
import { followCreate, type CreatedNodeView } from "./rented-create-follow.js";

/** A resume waits for the provider to accept it; the node bounds it by the endpoint's cold start. */
const RESUME_TIMEOUT_MS = 15 * 60_000;

/** States a resumed node passes through on its way to running. */
const ON_THE_WAY = new Set(["starting", "warming"]);

/** The node's answer to the resume (`--json`), or its row once followed. */
export async function resumeFollowed(
  io: CliIo,
  configFile: string | undefined,
  name: string,
  json: boolean,
): Promise<{ code: number; view: CreatedNodeView }> {
  const sinceMs = io.nowMs();
  const answer = (await rentedCall(io, configFile, "/pair/v1/rented/lifecycle", {
    body: { name, action: "resume" },
    timeoutMs: RESUME_TIMEOUT_MS,
  })) as CreatedNodeView;
  if (json) return { code: 0, view: answer };
  return followCreate(io, configFile, answer, false, {
    prefix: `resuming ${name}: `,
    sinceMs,
    goesOn: "goes on resuming",
    restsIn: (state) => !ON_THE_WAY.has(state),
  });
}
