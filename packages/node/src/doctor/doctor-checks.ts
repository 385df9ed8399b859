/**
 * `pair doctor`'s checks: each looks at one thing a node needs (the client port, the engines, the
 * OS credential store, the data dir, budgets, Node itself, the running node, its peers and their
 * clocks) and says
 * ok, warn, fail or skip, with the exact command that fixes it. Every look at the machine goes through
 * `DoctorProbes`, so each check is tested against the situations it names.
 * Must not know: how results are printed, the command line.
 */

import type { CredentialRef, PairConfig, RentedNodeConfig } from "../config/index.js";

export type CheckStatus = "ok" | "warn" | "fail" | "skip";

export interface CheckResult {
  readonly check: string;
  readonly status: CheckStatus;
  readonly detail: string;
  /** What to run or change; null when nothing is to be done. */
  readonly fix: string | null;
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

export interface DoctorProbes {
  readonly platform: NodeJS.Platform;
  /** The running Node's version, `v24.1.0`. */
  readonly nodeVersion: string;
  /** GET with a short timeout; an Error when nothing answers. */
  httpGet(url: string): Promise<HttpAnswer | Error>;
  exists(path: string): boolean;
  /** Mode bits and owner of a path, or undefined when it does not exist. */
  stat(path: string): { readonly mode: number; readonly uid: number } | undefined;
  /** This process's user id (-1 where there is none, Windows). */
  readonly uid: number;
  /** Whether the credential is stored; an Error when the store cannot be asked (missing, locked). */
  credentialStored(ref: CredentialRef): Promise<boolean | Error>;
  /** The running node's admin answer for a path, or undefined when no node answers. */
  admin(path: string): Promise<unknown>;
}

/** Node lines PAIR supports: those alive (the package's `engines`). */
export const SUPPORTED_NODE_MAJORS = [22, 24, 26] as const;
/** The port Ollama moves to, where PAIR adopts it by default. */
const OLLAMA_MOVED = "127.0.0.1:11435";

const result = (
  check: string,
  status: CheckStatus,
  detail: string,
  fix: string | null = null,
): CheckResult => ({
  check,
  status,
  detail,
  fix,
});

export function checkNode(probes: DoctorProbes): CheckResult {
  const major = Number(/^v(\d+)\./.exec(probes.nodeVersion)?.[1] ?? NaN);
  if ((SUPPORTED_NODE_MAJORS as readonly number[]).includes(major) || major > 26)
    return result("node", "ok", `Node ${probes.nodeVersion}`);
  return result(
    "node",
    "fail",
    `Node ${probes.nodeVersion} is not supported (supported: ${SUPPORTED_NODE_MAJORS.join(", ")})`,
    "install a current Node (24 LTS) and reinstall PAIR with it",
  );
}

/** How Ollama was installed here, for the command that moves it to `to` (host:port). */
function ollamaMove(probes: DoctorProbes, to = OLLAMA_MOVED): string {
  if (probes.platform === "darwin" && probes.exists("/Applications/Ollama.app"))
    return `the Ollama app: \`launchctl setenv OLLAMA_HOST ${to}\`, then quit and reopen Ollama`;
  if (probes.platform === "win32")
    return `\`setx OLLAMA_HOST ${to}\`, then quit Ollama from the tray and start it again`;
  if (
    probes.platform === "linux" &&
    (probes.exists("/etc/systemd/system/ollama.service") ||
      probes.exists("/usr/lib/systemd/system/ollama.service"))
  )
    return (
      "the ollama systemd unit: `sudo systemctl edit ollama`, add the lines " +
      `\`[Service]\` and \`Environment="OLLAMA_HOST=${to}"\`, then \`sudo systemctl restart ollama\``
    );
  return `where you start it: \`OLLAMA_HOST=${to} ollama serve\``;
}

export async function checkClientPort(config: PairConfig, probes: DoctorProbes): Promise<CheckResult> {
  const { host, port } = config.node.listen;
  const address = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  const target = host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "[::1]" : address.replace(/:\d+$/, "");
  const answer = await probes.httpGet(`http://${target}:${port}/`);
  if (answer instanceof Error)
    return result(
      "client port",
      "warn",
      `nothing answers on ${address}: no node runs`,
      "`pair serve` (or `pair service install` to keep one running)",
    );
  if (answer.body.startsWith("PAIR is running"))
    return result("client port", "ok", `a PAIR node answers on ${address}`);
  if (answer.body.startsWith("Ollama is running"))
    return result(
      "client port",
      "fail",
      `Ollama holds ${address}, where apps expect PAIR (PAIR then adopts Ollama on ${OLLAMA_MOVED})`,
      `move Ollama — ${ollamaMove(probes)}; then start PAIR`,
    );
  return result(
    "client port",
    "fail",
    `another program answers on ${address} (HTTP ${answer.status})`,
    "stop it, or set node.listen to another address in the config",
  );
}

export async function checkEngines(config: PairConfig, probes: DoctorProbes): Promise<CheckResult[]> {
  return Promise.all(
    config.engines.map(async (engine) => {
      const url = engine.api === "ollama" ? `${engine.baseUrl}/api/version` : `${engine.baseUrl}/models`;
      const answer = await probes.httpGet(url);
      const name = `engine ${engine.name}`;
      if (answer instanceof Error)
        return result(
          name,
          "fail",
          `${engine.baseUrl} does not answer (${answer.message})`,
          engine.api === "ollama"
            ? `start Ollama on ${engine.baseUrl} — ${ollamaMove(probes, engine.baseUrl.replace(/^https?:\/\//, ""))}`
            : `start the engine at ${engine.baseUrl}, or fix engines[].base_url`,
        );
      if (answer.status !== 200)
        return result(
          name,
          "fail",
          `${url} answered HTTP ${answer.status}`,
          `check engines[].base_url and api (${engine.api})`,
        );
      return result(name, "ok", `${engine.baseUrl} answers (${engine.api})`);
    }),
  );
}

/** Every credential the config names, with the rented node that names it. */
function credentialUses(config: PairConfig): { node: string; ref: CredentialRef }[] {
  return config.rentedNodes.flatMap((n) => {
    const refs: CredentialRef[] = [];
    if (n.credential !== undefined) refs.push(n.credential);
    if ("vllmApiKey" in n) refs.push(n.vllmApiKey);
    return refs.map((ref) => ({ node: n.name, ref }));
  });
}

export async function checkCredentials(config: PairConfig, probes: DoctorProbes): Promise<CheckResult[]> {
  const uses = credentialUses(config);
  if (uses.length === 0) return [result("credential store", "skip", "the config names no credential")];
  const out: CheckResult[] = [];
  for (const { node, ref } of uses) {
    const name = `${ref.service}/${ref.account}`;
    const stored = await probes.credentialStored(ref);
    if (stored instanceof Error)
      return [
        result(
          "credential store",
          "fail",
          stored.message,
          "unlock your keyring (Linux: the Secret Service; README, Credentials), then run pair doctor again",
        ),
      ];
    out.push(
      stored
        ? result(`credential ${name}`, "ok", `stored (used by rented node ${node})`)
        : result(
            `credential ${name}`,
            "fail",
            `rented node ${node} needs it and the store has none`,
            `pair credential set ${name}`,
          ),
    );
  }
  return out;
}

export function checkDataDir(config: PairConfig, probes: DoctorProbes): CheckResult[] {
  const dir = config.node.dataDir;
  const info = probes.stat(dir);
  if (info === undefined)
    return [result("data dir", "ok", `${dir} does not exist yet (pair serve makes it, 0700)`)];
  const out: CheckResult[] = [];
  if (probes.platform !== "win32") {
    if (probes.uid >= 0 && info.uid !== probes.uid)
      out.push(
        result(
          "data dir",
          "fail",
          `${dir} belongs to user ${info.uid}, not you (${probes.uid})`,
          `sudo chown -R $(id -u) ${dir}`,
        ),
      );
    if ((info.mode & 0o077) !== 0)
      out.push(
        result(
          "data dir",
          "fail",
          `${dir} is mode ${(info.mode & 0o777).toString(8)}: others may read or write it`,
          `chmod 700 ${dir}`,
        ),
      );
  }
  return out.length > 0 ? out : [result("data dir", "ok", `${dir} (mode 700, yours)`)];
}

/** A node PAIR starts and stops on a provider's bill (as opposed to one it only routes to). */
export function billedByPair(node: RentedNodeConfig): boolean {
  if ("pod" in node || "job" in node) return true;
  return node.lifecycle.managed && (node.provider === "huggingface-endpoint" || node.provider === "runpod");
}

/** The config refuses a billed node with no budget (budget_required); what is left to flag is no cap. */
export function checkBudgets(config: PairConfig): CheckResult[] {
  const billed = config.rentedNodes.filter(billedByPair);
  if (billed.length === 0) return [result("budgets", "skip", "no rented node that PAIR starts")];
  return billed.map((n) => {
    const b = n.budget;
    if (b.budgetMicroUsdPerDay === undefined && b.budgetMicroUsdPerMonth === undefined)
      return result(
        `budget ${n.name}`,
        "warn",
        "budget: { unlimited: true } — nothing caps what it spends",
        `set a cap on rented node ${n.name}: budget: { usd_per_day: 10 }`,
      );
    const caps = [
      b.budgetMicroUsdPerDay === undefined ? "" : `$${b.budgetMicroUsdPerDay / 1e6}/day`,
      b.budgetMicroUsdPerMonth === undefined ? "" : `$${b.budgetMicroUsdPerMonth / 1e6}/month`,
    ];
    return result(`budget ${n.name}`, "ok", caps.filter(Boolean).join(", "));
  });
}

interface NodeRow {
  readonly name: string;
  readonly kind: string;
  readonly state: string;
  readonly last_seen?: string | null;
  /** The peer's clock minus this node's, in ms (absent from older nodes). */
  readonly clock_offset_ms?: number | null;
}

/** Clocks further apart than this put events of two nodes out of order in logs and history. */
export const CLOCK_WARN_MS = 2_000;
/** Further apart than this, one of the clocks is simply wrong (the bound Kerberos uses). */
export const CLOCK_FAIL_MS = 5 * 60_000;

/** The command that sets this machine's clock from the network. */
function clockFix(platform: NodeJS.Platform, peer: string): string {
  const here =
    platform === "darwin"
      ? "`sudo sntp -sS time.apple.com`"
      : platform === "win32"
        ? "`w32tm /resync` (in an administrator prompt)"
        : "`sudo timedatectl set-ntp true`";
  return `set the clocks from the network, here with ${here}, and the same on ${peer}; then run pair doctor again`;
}

function checkClock(p: NodeRow, platform: NodeJS.Platform): CheckResult {
  const name = `clock ${p.name}`;
  const offset = p.clock_offset_ms;
  if (typeof offset !== "number") return result(name, "skip", "not measured (the peer has not answered yet)");
  const abs = Math.abs(offset);
  const how = `${p.name}'s clock is ${(abs / 1000).toFixed(1)} s ${offset > 0 ? "ahead of" : "behind"} this node's`;
  if (abs > CLOCK_FAIL_MS) return result(name, "fail", how, clockFix(platform, p.name));
  if (abs > CLOCK_WARN_MS)
    return result(name, "warn", `${how}: logs and history of the two disagree`, clockFix(platform, p.name));
  return result(name, "ok", `within ${(CLOCK_WARN_MS / 1000).toFixed(0)} s (${offset} ms)`);
}

export async function checkPeers(probes: DoctorProbes): Promise<CheckResult[]> {
  const nodes = await probes.admin("/pair/v1/nodes");
  if (!Array.isArray(nodes)) return [result("peers", "skip", "no node runs here to ask")];
  const peers = (nodes as NodeRow[]).filter((n) => n.kind === "peer");
  if (peers.length === 0) return [result("peers", "skip", "this node is paired with no other node")];
  return peers.flatMap((p) =>
    p.state === "up"
      ? [result(`peer ${p.name}`, "ok", "up"), checkClock(p, probes.platform)]
      : [
          result(
            `peer ${p.name}`,
            "fail",
            `${p.state}${p.last_seen ? ` since ${p.last_seen}` : ""}`,
            `check that pair serve runs on ${p.name} and that its cluster port (default 14323) is reachable from here`,
          ),
        ],
  );
}
