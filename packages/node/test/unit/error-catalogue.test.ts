// docs/errors.md is the catalogue users rely on: every code the code can produce is listed there.
import { readFileSync } from "node:fs";
import { REFUSAL_CODES } from "@pair/provision";
import { RUNPOD_CREATE_REFUSAL_CODES } from "@pair/runpod";
import { describe, expect, it } from "vitest";
import { AUTH_ERROR_CODES } from "../../src/auth/index.js";
import { BATCH_ERROR_CODES } from "../../src/batch/index.js";
import { CLUSTER_ERROR_CODES, PAIRING_ERROR_CODES } from "@pair/cluster";
import { CONFIG_PROBLEM_CODES } from "../../src/config/index.js";
import { CREDENTIAL_ERROR_CODES } from "../../src/credentials/index.js";
import { PAIR_ERROR_CODES } from "@pair/dialects";
import { LISTEN_ERROR_CODES } from "../../src/node.js";
import { RENTED_CHANGE_CODES } from "@pair/sponsor";
import { ADMIN_AUTH_ERROR_CODES, LIVE_EVENTS_ERROR_CODES } from "../../src/ui/index.js";

const doc = readFileSync(new URL("../../../../docs/errors.md", import.meta.url), "utf8");
const documented = new Set([...doc.matchAll(/^\| `([a-z_-]+)` \|/gm)].map((m) => m[1]!));

describe("docs/errors.md", () => {
  it.each([
    ["HTTP API", Object.keys(PAIR_ERROR_CODES)],
    ["configuration", [...CONFIG_PROBLEM_CODES]],
    ["node start and API key", [...LISTEN_ERROR_CODES, ...AUTH_ERROR_CODES]],
    ["cluster", [...CLUSTER_ERROR_CODES]],
    ["credential store", [...CREDENTIAL_ERROR_CODES]],
    ["pairing", [...PAIRING_ERROR_CODES]],
    ["rented node change", [...RENTED_CHANGE_CODES]],
    ["Runpod create refusal", [...RUNPOD_CREATE_REFUSAL_CODES]],
    ["admin API and dashboard sign-in", [...ADMIN_AUTH_ERROR_CODES, ...LIVE_EVENTS_ERROR_CODES]],
    ["hosting contract", [...REFUSAL_CODES]],
    ["batch", [...BATCH_ERROR_CODES]],
  ])("lists every %s code", (area, codes) => {
    expect(codes.length).toBeGreaterThan(
      area === "credential store" || area.startsWith("admin") || area.startsWith("Runpod") ? 1 : 3,
    );
    for (const code of codes) expect(documented, code).toContain(code);
  });

  it("lists nothing the code no longer has", () => {
    const known = new Set<string>([
      ...Object.keys(PAIR_ERROR_CODES),
      ...CONFIG_PROBLEM_CODES,
      ...LISTEN_ERROR_CODES,
      ...AUTH_ERROR_CODES,
      ...CLUSTER_ERROR_CODES,
      ...CREDENTIAL_ERROR_CODES,
      ...PAIRING_ERROR_CODES,
      ...RENTED_CHANGE_CODES,
      ...RUNPOD_CREATE_REFUSAL_CODES,
      ...ADMIN_AUTH_ERROR_CODES,
      ...LIVE_EVENTS_ERROR_CODES,
      ...REFUSAL_CODES,
      ...BATCH_ERROR_CODES,
    ]);
    for (const code of documented) expect(known, code).toContain(code);
  });
});
