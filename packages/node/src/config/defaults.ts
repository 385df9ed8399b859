/**
 * Every default of the configuration, in the units docs/reference.md writes them (seconds, minutes, the
 * YAML spelling), and the limits each value is checked against. One place, so a test can compare
 * them with docs/reference.md's example.
 * Must not know: YAML, how values are read or converted.
 */

export const MS_PER_SECOND = 1_000;
export const MS_PER_MINUTE = 60_000;
export const MS_PER_DAY = 86_400_000;
export const MICRO_USD_PER_USD = 1_000_000;

/** Longest config file read. */
export const MAX_CONFIG_FILE_BYTES = 1_048_576;

export const NODE_DEFAULTS = {
  data_dir: "~/.local/share/pair",
  listen: "127.0.0.1:11434",
  cluster_listen: "0.0.0.0:14323",
  mdns: true,
  history_max_rows: 100_000,
  history_max_days: 30,
  /** MiB: the largest non-streamed reply or error body read from an upstream. */
  max_upstream_body_mb: 32,
} as const;

/** With no `engines` key, the node adopts a local Ollama moved off the client port. */
export const DEFAULT_ENGINE = {
  name: "ollama",
  api: "ollama",
  base_url: "http://127.0.0.1:11435",
} as const;

export const ENGINE_DEFAULTS = {
  max_concurrent: 2,
  probe_interval_s: 5,
  first_byte_timeout_s: 300,
} as const;

/** The rented nodes' defaults live with their config types in the sponsor (its probe reads one). */
export { RENTED_DEFAULTS } from "@pair/sponsor";

/** A managed Runpod pod's `pod:` settings, as docs/rented-nodes.md writes them. */
export const RUNPOD_POD_DEFAULTS = {
  gpu_count: 1,
  cloud_type: "SECURE",
  container_disk_gb: 50,
  volume_gb: 0,
  port: 8000,
  startup_deadline_s: 900,
  idle_timeout_min: 15,
  crash_restart_limit: 3,
  crash_window_s: 600,
} as const;

export const PROVIDER_DEFAULTS = {
  huggingface_endpoints_api: "https://api.endpoints.huggingface.cloud",
  huggingface_hub_api: "https://huggingface.co",
  huggingface_catalog_api: "https://endpoints.huggingface.co/api/catalog",
  runpod_api: "https://api.runpod.io",
  /** A pod's proxy base URL: `{pod_id}` and `{port}` are replaced (the emulator serves its own). */
  runpod_proxy_url: "https://{pod_id}-{port}.proxy.runpod.net",
} as const;

/** Limits: every number and list is bounded where it enters. */
export const LIMITS = {
  /** Longest timeout, probe interval or idle period. */
  maxDurationMs: 7 * MS_PER_DAY,
  maxHistoryDays: 3_650,
  maxHistoryRows: 100_000_000,
  maxUpstreamBodyMb: 4_096,
  maxConcurrent: 1_024,
  /** Largest budget cap, in USD. */
  maxBudgetUsd: 1_000_000,
  maxEngines: 64,
  maxRentedNodes: 64,
  maxPeers: 256,
  maxApiKeys: 256,
  maxAllowedHosts: 256,
  maxAllowedOrigins: 256,
  maxModels: 1_024,
  maxNameLength: 63,
  maxStringLength: 2_048,
} as const;
