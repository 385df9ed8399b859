/**
 * The configs `pair demo` writes for its two nodes: A, the sponsor (a local engine, the managed
 * Hugging Face endpoint `gpu-hf`, the emulator's CA as `tls.extra_ca_file`), and B, a peer (a local
 * engine, no rented node, no credential). A's rented-node settings change between steps of the tour
 * the way a user edits a config file and restarts `pair serve`: `SponsorSettings` is that edit.
 * Must not know: how nodes start, what the tour checks.
 */

/** The model the emulated Hugging Face endpoint serves. */
export const DEMO_HF_MODEL = "Qwen/Qwen3-0.6B";
/** The managed rented node on A. */
export const DEMO_RENTED_NODE = "gpu-hf";
/** `namespace/name` of the endpoint on the emulated Hugging Face account. */
export const DEMO_HF_ENDPOINT = { namespace: "alice", name: "qwen" } as const;
/** HF's own scale-to-zero after this many idle minutes (the endpoint's setting, HF's default). */
export const DEMO_SCALE_TO_ZERO_MIN = 15;
/** A's `timeouts.cold_start_s` (also sent as X-Scale-Up-Timeout): above the old 120 s header timeout. */
export const DEMO_COLD_START_S = 300;

export interface SponsorSettings {
  readonly wakeOnRequest: boolean;
  readonly idlePauseMin: number;
  readonly pauseOnSponsorExit: boolean;
  /** A's daily cap on the endpoint (a managed node needs a budget: budget_required). */
  readonly usdPerDay: number;
  /** A also serves DEMO_HF_MODEL on a local engine (for the precedence step). */
  readonly localCopy: boolean;
}

export const START_SETTINGS: SponsorSettings = {
  wakeOnRequest: false,
  idlePauseMin: 5,
  pauseOnSponsorExit: false,
  usdPerDay: 2,
  localCopy: false,
};

export interface DemoNodeFiles {
  readonly name: string;
  readonly dataDir: string;
  readonly port: number;
  readonly clusterPort: number;
  /** `name: base_url` of Ollama engines (and, for A with a local copy, the OpenAI one). */
  readonly ollamaUrl: string;
}

function nodeLines(n: DemoNodeFiles): string[] {
  // Port 0 (any free port) is the start's override; the file then names a placeholder until rewritten.
  return [
    "node:",
    `  name: ${n.name}`,
    `  data_dir: ${JSON.stringify(n.dataDir)}`,
    `  listen: 127.0.0.1:${n.port === 0 ? 11500 : n.port}`,
    `  cluster_listen: 127.0.0.1:${n.clusterPort === 0 ? 14323 : n.clusterPort}`,
    "  discovery: { mdns: false }",
    "engines:",
    `  - name: ${n.name}-ollama`,
    "    api: ollama",
    `    base_url: ${n.ollamaUrl}`,
    "    max_concurrent: 4",
    "    probe_interval_s: 0.3",
  ];
}

export function peerYaml(n: DemoNodeFiles): string {
  return [
    "# Written by `pair demo` (node B, a peer); removed when the demo stops.",
    ...nodeLines(n),
    "",
  ].join("\n");
}

export interface SponsorFiles extends DemoNodeFiles {
  /** The local engine holding DEMO_HF_MODEL (OpenAI API, ends in /v1). */
  readonly localCopyUrl: string;
  readonly credential: string;
  readonly endpointsApi: string;
  readonly hubApi: string;
  readonly caFile: string;
}

export function sponsorYaml(n: SponsorFiles, s: SponsorSettings): string {
  return [
    "# Written by `pair demo` (node A, the sponsor); removed when the demo stops.",
    ...nodeLines(n),
    ...(s.localCopy
      ? [
          `  - name: ${n.name}-vllm`,
          "    api: openai",
          `    base_url: ${n.localCopyUrl}`,
          "    max_concurrent: 1",
          "    probe_interval_s: 0.3",
        ]
      : []),
    "rented_nodes:",
    `  - name: ${DEMO_RENTED_NODE}`,
    "    provider: huggingface-endpoint",
    `    endpoint: ${DEMO_HF_ENDPOINT.namespace}/${DEMO_HF_ENDPOINT.name}`,
    `    credential: ${n.credential}`,
    `    timeouts: { cold_start_s: ${DEMO_COLD_START_S} }`,
    `    lifecycle: { wake_on_request: ${s.wakeOnRequest}, idle_pause_min: ${s.idlePauseMin}, ` +
      `pause_on_sponsor_exit: ${s.pauseOnSponsorExit}, exit_timeout_s: 5 }`,
    `    budget: { usd_per_day: ${s.usdPerDay} }`,
    "providers:",
    `  huggingface: { endpoints_api: ${n.endpointsApi}, hub_api: ${n.hubApi} }`,
    "tls:",
    `  extra_ca_file: ${JSON.stringify(n.caFile)}`,
    "",
  ].join("\n");
}
