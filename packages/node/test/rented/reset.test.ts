// `pair rented reset NAME` (docs/reference.md): the share switch and routing policy set at run time take
// precedence over the config file until reset; a reset brings back the config's values (or those a
// node was attached with), keeps the node, and reaches peers at once.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RENTED_FILE } from "@pair/sponsor";
import { runCli } from "../cli/cli-harness.js";
import { admin, joinWith, showPin, startTestNodeWith } from "../cluster/node-pair-harness.js";
import { sponsorAsTestNode, startRentedEndpoint, startSponsor, type Sponsor } from "./rented-harness.js";
import { cleanupAfterEach, until } from "../support/eventually.js";
import { fakeHfToken } from "../support/fake-token.js";
import { keyringCa } from "../support/keyring-worlds.js";

const TOKEN = fakeHfToken();
const defer = cleanupAfterEach();
const keyring = keyringCa();

interface RentedRow {
  readonly name: string;
  readonly shared: boolean;
  readonly policy: string;
  readonly overridden: boolean;
  readonly source: string;
}

async function sponsorWorld(): Promise<{ sponsor: Sponsor; baseUrl: string }> {
  const e = await startRentedEndpoint(keyring.ca, { apiKey: TOKEN });
  defer(() => e.engine.close());
  const sponsor = await startSponsor({ token: TOKEN, baseUrl: e.baseUrl, caPem: keyring.ca.certPem });
  defer(() => sponsor.close());
  return { sponsor, baseUrl: e.baseUrl };
}

async function cli(s: Sponsor, ...args: string[]) {
  return runCli(["rented", ...args, "--config", s.configFile]);
}

async function json<T>(s: Sponsor, ...args: string[]): Promise<T> {
  const result = await cli(s, ...args, "--json");
  expect(result, result.stderr).toMatchObject({ code: 0 });
  return JSON.parse(result.stdout) as T;
}

/** The run-time overrides kept in the sponsor's data dir. */
function overridesOnDisk(s: Sponsor): Record<string, unknown> {
  const file = JSON.parse(readFileSync(join(s.dataDir, RENTED_FILE), "utf8")) as {
    overrides: Record<string, unknown>;
  };
  return file.overrides;
}

describe("pair rented reset", () => {
  it("drops the run-time share and policy: the config's values apply again, on the sponsor and on its peers", async () => {
    const { sponsor } = await sponsorWorld();
    const laptop = await startTestNodeWith("laptop", { refreshMs: 150, timeoutMs: 400 });
    defer(() => laptop.close());
    const joined = await joinWith(
      laptop,
      sponsorAsTestNode(sponsor),
      await showPin(sponsorAsTestNode(sponsor)),
    );
    expect(joined.status).toBe(200);
    const seenByLaptop = async () =>
      ((await admin(laptop, "/pair/v1/nodes")).json as Record<string, unknown>[]).find(
        (r) => r["name"] === "gpu-rent",
      );
    await until(async () => (await seenByLaptop())?.["shared"] === false);

    await json<RentedRow>(sponsor, "share", "gpu-rent", "on");
    const changed = await json<RentedRow>(sponsor, "policy", "gpu-rent", "prefer");
    expect(changed).toMatchObject({ shared: true, policy: "prefer", overridden: true });
    expect(overridesOnDisk(sponsor)).toEqual({
      "gpu-rent": { share_with_cluster: true, routing_use: "prefer" },
    });
    await until(async () => (await seenByLaptop())?.["shared"] === true);

    const reset = await json<RentedRow>(sponsor, "reset", "gpu-rent");
    expect(reset).toMatchObject({
      name: "gpu-rent",
      shared: false,
      policy: "when-no-local-node",
      overridden: false,
      source: "config",
    });
    expect(overridesOnDisk(sponsor)).toEqual({});
    const [listed] = await json<RentedRow[]>(sponsor, "list");
    expect(listed).toMatchObject({ name: "gpu-rent", shared: false, policy: "when-no-local-node" });
    await until(async () => (await seenByLaptop())?.["shared"] === false);
    expect(
      sponsor.log.some((l) =>
        /gpu-rent: run-time changes reset — shared off, policy when-no-local-node/.test(l),
      ),
    ).toBe(true);

    // Nothing left to reset: the same view, nothing written, exit 0 (a script may reset blindly).
    const again = await cli(sponsor, "reset", "gpu-rent");
    expect(again).toMatchObject({ code: 0 });
    expect(again.stdout).toMatch(/gpu-rent\s+openai-compatible\s+\S+\s+no\s+when-no-local-node/);
    expect(overridesOnDisk(sponsor)).toEqual({});
  });

  it("keeps a node attached at run time, with the share it was attached with", async () => {
    const { sponsor, baseUrl } = await sponsorWorld();
    const ref = `os-credential-store:${sponsor.credential.service}/${sponsor.credential.account}`;
    const attached = await json<RentedRow>(
      sponsor,
      "attach",
      "extra",
      "--provider",
      "openai-compatible",
      "--base-url",
      baseUrl,
      "--credential",
      ref,
      "--share",
    );
    expect(attached).toMatchObject({ name: "extra", shared: true, overridden: false });
    expect(await json<RentedRow>(sponsor, "share", "extra", "off")).toMatchObject({
      shared: false,
      overridden: true,
    });

    const reset = await json<RentedRow>(sponsor, "reset", "extra");
    expect(reset).toMatchObject({ name: "extra", shared: true, overridden: false });
    const names = (await json<RentedRow[]>(sponsor, "list")).map((r) => r.name).sort();
    expect(names).toEqual(["extra", "gpu-rent"]);
    const file = JSON.parse(readFileSync(join(sponsor.dataDir, RENTED_FILE), "utf8")) as {
      attached: { name: string }[];
      overrides: Record<string, unknown>;
    };
    expect(file.attached.map((a) => a.name)).toEqual(["extra"]);
    expect(file.overrides).toEqual({});
  });

  it("names an unknown node (exit 1) and wants a NAME (exit 2)", async () => {
    const { sponsor } = await sponsorWorld();
    const unknown = await cli(sponsor, "reset", "nobody");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /unknown_rented_node: no rented node named nobody \(pair nodes lists them\)/,
    );

    const missing = await cli(sponsor, "reset");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing NAME/);

    const bad = await admin(sponsorAsTestNode(sponsor), "/pair/v1/rented/reset", { name: 7 });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: { code: "invalid_request" } });
  });
});
