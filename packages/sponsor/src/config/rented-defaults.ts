/**
 * The defaults of a rented node's keys, in the units docs/reference.md writes them (seconds, minutes,
 * the YAML spelling). The daemon's config/defaults.ts lists them with every other default.
 * Must not know: YAML, how values are read or converted.
 */

export const RENTED_DEFAULTS = {
  share_with_cluster: false,
  routing_use: "when-no-local-node",
  cold_start_s: 600,
  /** Requests this node sends one rented node at once (the provider queues beyond its own replicas). */
  max_concurrent: 64,
  wake_on_request: true,
  idle_pause_min: 15,
  pause_on_sponsor_exit: true,
  exit_timeout_s: 60,
  /** A managed endpoint that bills this long without serving `/v1/models` is paused. */
  startup_deadline_min: 30,
  /** Inference Providers' OpenAI-compatible router. */
  huggingface_providers_base_url: "https://router.huggingface.co/v1",
  /** vLLM's port behind the proxy of a pod attached by id (`providers.runpod.proxy_url`'s `{port}`). */
  runpod_proxy_port: 8000,
} as const;
