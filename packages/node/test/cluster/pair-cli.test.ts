// `pair pin`, `pair join`, `pair peers`, `pair unpair` in-process against two real nodes.
import type { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../cli/cli-harness.js";
import { agentBetween, peerHello, startTestNode, wrongPin, type TestNode } from "./node-pair-harness.js";

let laptop: TestNode;
let desktop: TestNode;
const agents: Agent[] = [];
beforeAll(async () => {
  [laptop, desktop] = await Promise.all([startTestNode("laptop"), startTestNode("pc-3090")]);
});
afterAll(async () => {
  await Promise.all(agents.map((a) => a.destroy()));
  await Promise.all([laptop.close(), desktop.close()]);
});

const on = (n: TestNode, ...argv: string[]) => runCli([...argv, "--config", n.configFile]);

async function pinOf(n: TestNode): Promise<string> {
  const r = await on(n, "pin", "--json");
  expect(r).toMatchObject({ code: 0, stderr: "" });
  const shown = JSON.parse(r.stdout) as Record<string, unknown>;
  expect(Object.keys(shown).sort()).toEqual(["expires_at", "pin"]);
  expect(shown["pin"]).toMatch(/^[0-9]{6}$/);
  expect(Date.parse(shown["expires_at"] as string)).toBeGreaterThan(Date.now());
  return shown["pin"] as string;
}

describe("pairing from the command line", () => {
  it("refuses wrong usage with exit 2", async () => {
    for (const [argv, message] of [
      [["join"], /missing ADDRESS/],
      [["join", desktop.clusterAddress], /--pin PIN is required/],
      [["join", desktop.clusterAddress, "--pin", "12"], /--pin: a PIN is 6 digits/],
      [["join", "nowhere", "--pin", "123456"], /ADDRESS: expected host:port/],
      [["unpair"], /missing NODE/],
      [["pin", "extra"], /Unexpected argument/],
    ] as const) {
      const r = await on(laptop, ...argv);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/Usage: pair /);
    }
  });

  it("says what failed: no PIN shown, a wrong PIN, a burnt PIN, an address that does not answer", async () => {
    const none = await on(laptop, "join", desktop.clusterAddress, "--pin", "123456");
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`pin_expired: ${desktop.clusterAddress} has no usable PIN`);

    const pin = await pinOf(desktop);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const wrong = await on(laptop, "join", desktop.clusterAddress, "--pin", wrongPin(pin));
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain(
        "pair join: pairing_failed: wrong PIN, or someone in between — show a new PIN with `pair pin`",
      );
    }
    const burnt = await on(laptop, "join", desktop.clusterAddress, "--pin", pin);
    expect(burnt.code).toBe(1);
    expect(burnt.stderr).toContain("pin_attempts_exhausted: too many wrong tries burnt the PIN");

    const nobody = await on(laptop, "join", "127.0.0.1:1", "--pin", pin);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain("peer_unreachable: nothing answers on 127.0.0.1:1 (connection refused)");
    expect(nobody.stderr).toContain("cluster_listen");

    const clientPort = await on(laptop, "join", `127.0.0.1:${desktop.node.port}`, "--pin", pin);
    expect(clientPort.stderr).toContain("not_a_pair_node:");
  });

  it("pairs with pin + join, lists peers, talks over mTLS, and unpairs", async () => {
    const shown = await on(desktop, "pin");
    expect(shown.code).toBe(0);
    const pin = /PIN ([0-9]{6})/.exec(shown.stdout)?.[1] ?? "";
    expect(shown.stdout).toContain(`pair join <this node's address>:<cluster port> --pin ${pin}`);

    const joined = await on(laptop, "join", desktop.clusterAddress, "--pin", pin, "--json");
    expect(joined).toMatchObject({ code: 0, stderr: "" });
    const peer = JSON.parse(joined.stdout) as Record<string, unknown>;
    expect(peer).toMatchObject({ name: "pc-3090", node_id: desktop.node.cluster.identity.nodeId });

    const peers = await on(desktop, "peers", "--json");
    expect(JSON.parse(peers.stdout)).toEqual([
      expect.objectContaining({ name: "laptop", node_id: laptop.node.cluster.identity.nodeId }),
    ]);
    const status = await on(laptop, "status");
    expect(status.stdout).toMatch(new RegExp(`^cluster +${laptop.clusterAddress}$`, "m"));
    expect(status.stdout).toMatch(/^peers +1$/m);
    const table = await on(laptop, "peers");
    expect(table.stdout).toMatch(/^NAME +NODE ID +FINGERPRINT +PAIRED$/m);
    expect(table.stdout).toContain("pc-3090");

    const toDesktop = agentBetween(laptop, desktop);
    agents.push(toDesktop);
    expect((await peerHello(desktop, toDesktop)).status).toBe(200);

    const unpaired = await on(desktop, "unpair", "laptop");
    expect(unpaired).toMatchObject({ code: 0, stderr: "" });
    expect(unpaired.stdout).toContain("unpaired laptop");
    await expect(peerHello(desktop, toDesktop)).rejects.toThrow();
    const again = await on(desktop, "unpair", "laptop");
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("unknown_peer:");
    expect((await on(desktop, "peers")).stdout).toContain("no paired nodes");
  });
});
