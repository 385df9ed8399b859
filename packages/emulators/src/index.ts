/**
 * @pair/emulators: wire-faithful stand-ins for the services PAIR talks to, on loopback.
 * The local engine emulator (Ollama, vLLM, llama.cpp server, LM Studio), speaking the OpenAI and
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
export { createEngineHandler, type EngineHandler } from "./engine/handler.js";
export type { EngineUsage, UsageListener } from "./engine/options.js";
export * from "./huggingface/index.js";
