import { describe, expect, it } from "vitest";
import {
  ALLOWED_ACTIONS,
  POD_ACTIONS,
  POD_STATUSES,
  actionTarget,
  holdsGpu,
} from "../../src/runpod/pod-lifecycle.js";

// The v2 spec's podAction description, verbatim in substance: the table must say the same.
const DOCUMENTED = `RUNNING allows stop/restart/terminate; EXITED and ERROR allow start/terminate; PROVISIONING and STARTING allow stop/terminate.`;

describe("the pod state table", () => {
  it("allows exactly the actions the v2 spec documents per status (none once TERMINATED)", () => {
    const documented = new Map<string, string[]>();
    for (const clause of DOCUMENTED.replace(/\.$/, "").split("; ")) {
      const [subjects, actions] = clause.split(/ allows? /) as [string, string];
      for (const status of subjects.split(/, | and /)) documented.set(status, actions.split("/"));
    }
    documented.set("TERMINATED", []);
    for (const status of POD_STATUSES) expect([...ALLOWED_ACTIONS[status]]).toEqual(documented.get(status));
  });

  it("leads every action to a status that is consistent with GPU holding", () => {
    expect(POD_ACTIONS.map(actionTarget)).toEqual(["STARTING", "EXITED", "STARTING", "TERMINATED"]);
    expect(POD_STATUSES.filter(holdsGpu)).toEqual(["PROVISIONING", "STARTING", "RUNNING"]);
  });
});
