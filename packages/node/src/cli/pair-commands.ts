/**
 * Pairing from the command line: `pair pin` shows a PIN on this node, `pair join ADDRESS --pin PIN`
 * pairs this node with the one showing it, `pair peers` lists the nodes this one trusts (and those
 * discovery saw that it does not), and
 * `pair unpair NODE` stops trusting one. Each asks the running node over its admin API; a refusal
 * becomes a message that names what failed and what to do.
 * Must not know: how pairing works, HTTP details (admin-client.ts).
 */

import { loadConfig, parseHostPort } from "../config/index.js";
import { parsePin } from "@pair/cluster";
import { adminRequest, adminTarget, type AdminAnswer, type AdminPost } from "./admin-client.js";
import { CliFailure, EXIT_OK, UsageError } from "./cli-errors.js";
import type { CliIo } from "./cli-io.js";
import type { Command } from "./command.js";
import {
  CONFIG_OPTION,
  HELP_OPTION,
  JSON_OPTION,
  parseCommandArgs,
  parseCommandWords,
} from "./command-args.js";
import { renderTable } from "./text-table.js";

const OPTIONS = { ...CONFIG_OPTION, ...JSON_OPTION, ...HELP_OPTION } as const;
/** A join waits for the other node; the node bounds the exchange itself (15 s). */
const JOIN_TIMEOUT_MS = 30_000;
const POST_TIMEOUT_MS = 5_000;

const COMMON_HELP = `  --config FILE  the node's config (else $PAIR_CONFIG, else the default file (README)): its
                 node.listen is where the node is asked, its data_dir holds the admin token
  --json         print JSON for scripts
  -h, --help     show this help`;

interface PeerJson {
  readonly node_id: string;
  readonly name: string;
  readonly fingerprint: string;
  readonly paired_at: string;
}

async function call(io: CliIo, configFile: string | undefined, path: string, post?: AdminPost) {
  const loaded = await loadConfig({
    file: configFile,
    env: io.env,
    homeDir: io.homeDir,
    hostName: io.hostName,
  });
  return adminRequest(adminTarget(loaded), path, post);
}

function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** The admin API's error `{code, message}`, when the answer is one. */
function errorOf(answer: AdminAnswer): { code: string; message: string } | undefined {
  const error = (answer.json as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.code !== "string") return undefined;
  return { code: error.code, message: typeof error.message === "string" ? error.message : "" };
}

/** The JSON of a 200 answer. @throws CliFailure with the node's own words otherwise */
function expectOk(answer: AdminAnswer, path: string): unknown {
  if (answer.status === 200) return answer.json;
  const error = errorOf(answer);
  throw new CliFailure(
    `the node answered HTTP ${answer.status} for ${path}` +
      (error === undefined ? "" : `: ${error.code}: ${error.message}`) +
      (answer.status === 404 ? " — is the node older than this pair? Restart `pair serve`" : ""),
  );
}

interface DiscoveredJson {
  /** Null when only the name is known (a static address none of our pinned peers answers at). */
  readonly node_id: string | null;
  readonly name: string | null;
  readonly address: string;
  readonly seen_via: readonly string[];
  readonly last_seen: string;
}

function asDiscovered(json: unknown): DiscoveredJson {
  const d = json as Partial<DiscoveredJson> | null;
  if (
    (typeof d?.node_id !== "string" && d?.node_id !== null) ||
    typeof d.address !== "string" ||
    !Array.isArray(d.seen_via)
  )
    throw new CliFailure(
      "the node's answer has an unexpected shape — restart `pair serve` from this install",
    );
  return d as DiscoveredJson;
}

function asPeer(json: unknown): PeerJson {
  const peer = json as Partial<PeerJson> | null;
  if (typeof peer?.node_id !== "string" || typeof peer.name !== "string")
    throw new CliFailure(
      "the node's answer has an unexpected shape — restart `pair serve` from this install",
    );
  return peer as PeerJson;
}

export const pinCommand: Command = {
  name: "pin",
  summary: "show a short-lived PIN so another node can pair with this one",
  usage: `Usage: pair pin [--config FILE] [--json]

Shows a 6-digit PIN. On the other node, run pair join with this node's cluster address
(node.cluster_listen, default port 14323) and the PIN before it expires (2 minutes). The PIN
works once; 3 wrong tries burn it. Showing a new PIN replaces the old one. The PIN travels only
inside the pairing exchange (a PAKE): nobody on the network learns it from what they see.
--json prints {"pin": "123456", "expires_at": "<ISO time>"}.

${COMMON_HELP}`,
  async run(args, io) {
    const flags = parseCommandArgs(args, OPTIONS);
    const json = expectOk(
      await call(io, flags.config, "/pair/v1/pin", { body: {}, timeoutMs: POST_TIMEOUT_MS }),
      "/pair/v1/pin",
    ) as { pin?: unknown; expires_at?: unknown };
    if (typeof json.pin !== "string" || typeof json.expires_at !== "string")
      throw new CliFailure(
        "the node's answer has an unexpected shape — restart `pair serve` from this install",
      );
    if (flags.json === true) {
      printJson(io, { pin: json.pin, expires_at: json.expires_at });
      return EXIT_OK;
    }
    const seconds = Math.max(0, Math.round((Date.parse(json.expires_at) - io.nowMs()) / 1000));
    io.stdout(
      `PIN ${json.pin}  (valid for ${seconds} s, until ${json.expires_at}; single use)\n` +
        `On the other node run:  pair join <this node's address>:<cluster port> --pin ${json.pin}\n` +
        "(the cluster port is node.cluster_listen, 14323 by default; `pair status` shows it)\n",
    );
    return EXIT_OK;
  },
};

/** What to tell the user for each way a join can fail. */
function joinFailure(address: string, code: string, message: string): CliFailure {
  const detail = message === "" ? "" : ` (${message})`;
  switch (code) {
    case "pairing_failed":
      return new CliFailure(
        `pairing_failed: wrong PIN, or someone in between — show a new PIN with \`pair pin\` on ${address} ` +
          "and try again",
      );
    case "pin_attempts_exhausted":
      return new CliFailure(
        `pin_attempts_exhausted: too many wrong tries burnt the PIN on ${address} — show a new one with ` +
          "`pair pin` there and try again",
      );
    case "pin_expired":
      return new CliFailure(
        `pin_expired: ${address} has no usable PIN (it expired, was used or replaced, or none is shown) — ` +
          "show a new one with `pair pin` there and try again",
      );
    case "pairing_busy":
      return new CliFailure(
        `pairing_busy: ${address} is busy with another pairing — try again in a few seconds`,
      );
    case "peer_unreachable":
      return new CliFailure(
        `peer_unreachable: ${message || `cannot reach ${address}`} — give the other node's node.cluster_listen ` +
          "(host:port, default port 14323), and check that `pair serve` runs there and the port is open",
      );
    case "not_a_pair_node":
      return new CliFailure(
        `not_a_pair_node: ${message || `${address} is not a PAIR node's cluster port`} — pair join takes the ` +
          "other node's node.cluster_listen (default port 14323), not its client port (11434)",
      );
    default:
      return new CliFailure(
        `${code}: pairing with ${address} failed${detail} — are both nodes running the same PAIR version?`,
      );
  }
}

export const joinCommand: Command = {
  name: "join",
  summary: "pair this node with another one, using the PIN it shows",
  usage: `Usage: pair join ADDRESS --pin PIN [--config FILE] [--json]

Pairs this node with the node at ADDRESS, which shows PIN (run \`pair pin\` there first).
ADDRESS is that node's node.cluster_listen as this machine reaches it, host:port (default port
14323), e.g. 192.168.1.20:14323. On success each node trusts the other's certificate, and from then
on they talk only over mutually authenticated TLS. --json prints the paired node
{"node_id", "name", "fingerprint", "paired_at"}.

  --pin PIN      the 6 digits the other node shows
${COMMON_HELP}`,
  async run(args, io) {
    const { values: flags, words } = parseCommandWords(args, { ...OPTIONS, pin: { type: "string" } }, [
      "ADDRESS",
    ]);
    const address = words[0] ?? "";
    if (!parseHostPort(address).ok)
      throw new UsageError(
        `ADDRESS: expected host:port, the other node's node.cluster_listen (e.g. 192.168.1.20:14323), got "${address}"`,
      );
    if (flags.pin === undefined)
      throw new UsageError("--pin PIN is required (run `pair pin` on the other node)");
    const pin = parsePin(flags.pin);
    if (!pin.ok) throw new UsageError(`--pin: ${pin.error.message}`);
    const answer = await call(io, flags.config, "/pair/v1/join", {
      body: { address, pin: pin.value },
      timeoutMs: JOIN_TIMEOUT_MS,
    });
    const error = answer.status === 200 ? undefined : errorOf(answer);
    if (error !== undefined) throw joinFailure(address, error.code, error.message);
    const peer = asPeer(expectOk(answer, "/pair/v1/join"));
    if (flags.json === true) printJson(io, peer);
    else
      io.stdout(
        `paired with ${peer.name} (node id ${peer.node_id}, certificate ${peer.fingerprint.slice(0, 16)}…)\n`,
      );
    return EXIT_OK;
  },
};

export const peersCommand: Command = {
  name: "peers",
  summary: "the nodes this node is paired with",
  usage: `Usage: pair peers [--config FILE] [--json]

Lists the nodes this node trusts: name, node id, certificate fingerprint, when they were paired.
Then the nodes discovery saw (by mDNS, or at a node.peers address) that are not paired: name,
node id ("-" when only the name is known: a node.peers address that none of the paired nodes
answers at), address, how it was seen, when — pair one with \`pair pin\` there and
\`pair join ADDRESS --pin PIN\` here. What discovery reports is a claim, not a proof: pairing is.
--json prints one array: the paired nodes {"node_id", "name", "fingerprint", "paired_at",
"address", "paired": true}, then the discovered ones {"node_id", "name", "address", "seen_via",
"last_seen", "paired": false}; "node_id" is null when only the name is known.

${COMMON_HELP}`,
  async run(args, io) {
    const flags = parseCommandArgs(args, OPTIONS);
    const json = expectOk(await call(io, flags.config, "/pair/v1/peers"), "/pair/v1/peers");
    if (!Array.isArray(json)) throw new CliFailure("the node's answer has an unexpected shape");
    const peers = json.map(asPeer);
    // A node from before discovery has no such route: nothing discovered.
    const seen = await call(io, flags.config, "/pair/v1/discovered");
    const found = seen.status === 404 ? [] : expectOk(seen, "/pair/v1/discovered");
    if (!Array.isArray(found)) throw new CliFailure("the node's answer has an unexpected shape");
    const discovered = found.map(asDiscovered);
    if (flags.json === true) {
      printJson(io, [
        ...peers.map((p) => ({ ...p, paired: true })),
        ...discovered.map((d) => ({ ...d, paired: false })),
      ]);
      return EXIT_OK;
    }
    const lines =
      peers.length === 0
        ? ["no paired nodes (pair one with `pair pin` and `pair join`)"]
        : renderTable(
            [{ header: "NAME" }, { header: "NODE ID" }, { header: "FINGERPRINT" }, { header: "PAIRED" }],
            peers.map((p) => [p.name, p.node_id, `${p.fingerprint.slice(0, 16)}…`, p.paired_at]),
          );
    if (discovered.length > 0)
      lines.push(
        "",
        "discovered, not paired (to pair one: `pair pin` on it, then `pair join ADDRESS --pin PIN` here):",
        ...renderTable(
          [
            { header: "NAME" },
            { header: "NODE ID" },
            { header: "ADDRESS" },
            { header: "SEEN VIA" },
            { header: "LAST SEEN" },
          ],
          discovered.map((d) => [
            d.name ?? "?",
            d.node_id ?? "-",
            d.address,
            d.seen_via.join(","),
            d.last_seen,
          ]),
        ),
      );
    io.stdout(lines.map((line) => `${line}\n`).join(""));
    return EXIT_OK;
  },
};

export const unpairCommand: Command = {
  name: "unpair",
  summary: "stop trusting a paired node",
  usage: `Usage: pair unpair NODE [--config FILE] [--json]

Stops trusting NODE (its name, or its node id from \`pair peers\`): from now on this node's cluster
port refuses its certificate, and its open connections are closed at once. Revocation is local:
to cut a node out of the cluster, unpair it on every node.

${COMMON_HELP}`,
  async run(args, io) {
    const { values: flags, words } = parseCommandWords(args, OPTIONS, ["NODE"]);
    const node = words[0] ?? "";
    const answer = await call(io, flags.config, "/pair/v1/unpair", {
      body: { node },
      timeoutMs: POST_TIMEOUT_MS,
    });
    const error = answer.status === 200 ? undefined : errorOf(answer);
    if (error?.code === "unknown_peer") throw new CliFailure(`unknown_peer: ${error.message}`);
    const peer = asPeer(expectOk(answer, "/pair/v1/unpair"));
    if (flags.json === true) printJson(io, peer);
    else
      io.stdout(
        `unpaired ${peer.name} (node id ${peer.node_id}): this node refuses it from now on; ` +
          "unpair it on the other nodes too to cut it out of the cluster\n",
      );
    return EXIT_OK;
  },
};
