/**
 * @pair/emulators: wire-faithful stand-ins for the services PAIR talks to, on loopback.
 * The local engine emulator (Ollama, vLLM, llama.cpp server, LM Studio), speaking the OpenAI and
 * Ollama dialects, and the Runpod emulator (REST v2 control plane, per-pod proxy to a vLLM-like
 * engine, virtual clock, billing meter, faults). Depends on Node built-ins only, and on nothing of ours.
 * Ollama dialects, and the Hugging Face emulator (Inference Endpoints control and data planes, hub
 * whoami, catalog, Inference Providers router). Depends on Node built-ins only, and on nothing of ours.
 */

export { startEngineEmulator, type EngineEmulator } from "./engine/server.js";
export {
  EmulatorOptionError,
  systemClock,
  type EmulatorClock,
  type EngineApi,
  type EngineEmulatorOptions,
  type EngineModelConfig,
  type OpenAiFlavor,
  type WhenFull,
} from "./engine/options.js";
export type { EngineFaults, Probabilistic } from "./engine/faults.js";
export type { EngineStats } from "./engine/engine-stats.js";
export {
  countChatTokens,
  countTextTokens,
  embedText,
  planReply,
  replyText,
  type CountedMessage,
  type FinishReason,
  type ReplyInput,
  type ReplyModel,
  type ReplyPlan,
} from "./engine/token-generator.js";
export {
  startRunpodEmulator,
  type PodInspection,
  type RunpodEmulator,
  type RunpodMeter,
  type RunpodRequestSeen,
} from "./runpod/server.js";
export { DEFAULT_TIMINGS, type RunpodEmulatorOptions } from "./runpod/options.js";
export type { LifecycleTimings } from "./runpod/control-plane.js";
export type { RunpodFaults } from "./runpod/faults.js";
export type { PodCharges } from "./runpod/billing.js";
export { DEFAULT_GPU_TYPES, type GpuTypeConfig } from "./runpod/catalog.js";
export type { PodWire } from "./runpod/pod-wire.js";
export type { PodAction, PodStatus } from "./runpod/pod-lifecycle.js";
export { podProxyUrl } from "./runpod/pod-proxy.js";
export type { RateLimitQuotas } from "./runpod/rate-limit.js";
export { createEngineHandler, type EngineHandler } from "./engine/handler.js";
export type { EngineUsage, UsageListener } from "./engine/options.js";
export * from "./huggingface/index.js";
export * from "./huggingface-jobs/index.js";
