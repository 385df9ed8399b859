/**
 * The bounds request validation enforces, beyond types: how many messages, parts, images, stop
 * sequences, tools and embedding inputs one request may carry. Body size in bytes is the HTTP
 * layer's bound, not this one. Limits are checked when built: a limit that is not a positive
 * integer is a programming error and throws at once.
 *
 * Must not know: either dialect's shapes, HTTP.
 */

export interface ValidationLimits {
  /** Chat messages per request. */
  readonly maxMessages: number;
  /** Content parts per OpenAI message. */
  readonly maxContentPartsPerMessage: number;
  /** Images per message (or per generate request). */
  readonly maxImagesPerMessage: number;
  /** Tool calls per assistant message. */
  readonly maxToolCallsPerMessage: number;
  /** Stop sequences per request. */
  readonly maxStopSequences: number;
  /** Tool definitions per request. */
  readonly maxTools: number;
  /** Inputs (strings or token arrays) per embedding request. */
  readonly maxEmbeddingInputs: number;
  /** Prompts (strings or token arrays) per text-completion request. */
  readonly maxPrompts: number;
  /** Token ids per token-array prompt or input, and per Ollama `context`. */
  readonly maxTokenIds: number;
}

/**
 * Generous defaults: a request Ollama or vLLM would take should not be refused here. (OpenAI
 * itself caps embedding inputs at 2048; engines cap by context length, which they check.)
 */
export const DEFAULT_VALIDATION_LIMITS: ValidationLimits = Object.freeze({
  maxMessages: 10_000,
  maxContentPartsPerMessage: 1_000,
  maxImagesPerMessage: 64,
  maxToolCallsPerMessage: 128,
  maxStopSequences: 64,
  maxTools: 512,
  maxEmbeddingInputs: 4_096,
  maxPrompts: 4_096,
  maxTokenIds: 1_048_576,
});

/** Builds limits from the defaults and overrides; throws `RangeError` on a non-positive or fractional one. */
export function validationLimits(overrides: Partial<ValidationLimits> = {}): ValidationLimits {
  const limits: ValidationLimits = { ...DEFAULT_VALIDATION_LIMITS, ...overrides };
  for (const [key, value] of Object.entries(limits)) {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`validation limit ${key} must be a positive integer, got ${String(value)}`);
    }
  }
  return Object.freeze(limits);
}

/**
 * `build`, run once per limits object: readers are built from the limits they enforce, and a
 * request should not pay for building them again.
 */
export function perLimits<T>(build: (limits: ValidationLimits) => T): (limits: ValidationLimits) => T {
  const built = new WeakMap<ValidationLimits, T>();
  return (limits) => {
    let value = built.get(limits);
    if (value === undefined) {
      value = build(limits);
      built.set(limits, value);
    }
    return value;
  };
}
