/**
 * The seed's validation steps 1–7 in the order the tour runs them (seed 001, "Validation approach").
 * Each step acts as a user would (a request to B's port, `pair rented …` on A, an edit of A's config
 * and a restart) and checks what the user would see; virtual time stands in for minutes and days.
 * Must not know: what any step does (tour-serving.ts, -limits.ts, -routing.ts).
 */

import type { TourStepSpec } from "./tour.js";
import { budget, sponsorExit } from "./tour-limits.js";
import { precedence, refusals } from "./tour-routing.js";
import { attachAndShare, coldStart, idlePauseAndWake } from "./tour-serving.js";

export const TOUR_STEPS: readonly TourStepSpec[] = [
  attachAndShare,
  coldStart,
  idlePauseAndWake,
  budget,
  sponsorExit,
  precedence,
  refusals,
];
