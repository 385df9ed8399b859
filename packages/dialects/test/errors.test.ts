import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  MAX_ENGINE_MESSAGE_CHARS,
  PAIR_ERROR_CODES,
  isPairErrorCode,
  pairErrorHeaders,
  ollamaErrorToOpenAI,
  openAIErrorToOllama,
  pairErrorOfEngineReply,
  pairErrorOfInvalidRequest,
  pairErrorReply,
  pairErrorToOllama,
  pairErrorToOpenAI,
  streamErrorMessageOf,
  validateOpenAIChatRequest,
  type PairErrorCode,
  type PairErrorSpec,
} from "../src/index.js";

/** The table of docs/errors.md's "HTTP API (client port)" section: code → its (first) HTTP status. */
function documentedCodes(): Record<string, number> {
  const doc = readFileSync(new URL("../../../docs/errors.md", import.meta.url), "utf8");
  const section = doc.split(/^## /m).find((s) => s.startsWith("HTTP API")) ?? "";
  const table: Record<string, number> = {};
  for (const match of section.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\b/gm))
    table[match[1]!] = Number(match[2]);
  return table;
}

describe("PAIR_ERROR_CODES", () => {
  it("holds exactly the codes of docs/errors.md's HTTP API table, each with its documented status", () => {
    const documented = documentedCodes();
    expect(Object.keys(documented).length).toBeGreaterThanOrEqual(12);
    expect(Object.keys(PAIR_ERROR_CODES).sort()).toEqual(Object.keys(documented).sort());
    for (const [code, spec] of Object.entries(PAIR_ERROR_CODES))
      expect([code, spec.status]).toEqual([code, documented[code]]);
    for (const code of ["host_refused", "origin_refused", "request_timeout"])
      expect(PAIR_ERROR_CODES, code).toHaveProperty(code);
  });

  it("gives every code an OpenAI type, and says whether a retry can help", () => {
    for (const spec of Object.values(PAIR_ERROR_CODES)) {
      expect(spec.openaiType).toMatch(/^[a-z_]+$/);
      expect(typeof spec.retryable).toBe("boolean");
    }
    expect(PAIR_ERROR_CODES.cold_start_timeout.retryable).toBe(true);
    expect(PAIR_ERROR_CODES.model_not_found.retryable).toBe(false);
    expect(isPairErrorCode("budget_exceeded")).toBe(true);
    expect(isPairErrorCode("toString")).toBe(false);
  });
});

describe("whether a retry helps", () => {
  const specs = Object.entries(PAIR_ERROR_CODES) as [PairErrorCode, PairErrorSpec][];
  const retriedByClients = (status: number) => [408, 409, 429].includes(status) || status >= 500;

  it.each(specs)("%s: its status and headers agree with its retryability", (code, spec) => {
    const headers = pairErrorHeaders(code);
    if (spec.retryable) {
      expect(spec.retryAfterS, "a retry helps: say when").toBeGreaterThanOrEqual(1);
      expect(Number.isInteger(spec.retryAfterS)).toBe(true);
      expect(headers).toEqual({ "retry-after": String(spec.retryAfterS) });
    } else {
      expect(spec.retryAfterS).toBeUndefined();
      // Hugging Face's InferenceClient retries any 503 at once and without limit.
      expect(spec.status).not.toBe(503);
      expect(headers).toEqual(retriedByClients(spec.status) ? { "x-should-retry": "false" } : {});
    }
    expect(spec.status).toBeGreaterThanOrEqual(400);
  });

  it("states that no prompt retry fixes a paused, ineligible or secretless node", () => {
    for (const code of ["rented_node_paused", "rented_node_ineligible", "credential_unavailable"] as const) {
      expect(PAIR_ERROR_CODES[code].retryable).toBe(false);
      expect(pairErrorHeaders(code)).toEqual({ "x-should-retry": "false" });
    }
    expect(pairErrorHeaders("upstream_error")["retry-after"]).toMatch(/^\d+$/);
  });

  it("documents each code's Retry-After in docs/errors.md", () => {
    const doc = readFileSync(new URL("../../../docs/errors.md", import.meta.url), "utf8");
    for (const [code, spec] of specs) {
      const row = doc.split("\n").find((line) => line.startsWith(`| \`${code}\` |`)) ?? "";
      if (spec.retryAfterS === undefined) expect(row, code).not.toContain("Retry-After");
      else expect(row, code).toContain(`Retry-After: ${spec.retryAfterS}`);
    }
  });
});

describe("PAIR's envelopes", () => {
  it("writes OpenAI routes' envelope: message, type, param, code, node", () => {
    expect(
      pairErrorToOpenAI({ code: "rented_node_paused", message: "hf-l40s is paused", node: "hf-l40s" }),
    ).toEqual({
      status: 409,
      body: {
        error: {
          message: "hf-l40s is paused",
          type: "server_error",
          param: null,
          code: "rented_node_paused",
          node: "hf-l40s",
        },
      },
    });
  });

  it("writes Ollama routes' body: Ollama's error string plus code and node", () => {
    expect(
      pairErrorToOllama({
        code: "budget_exceeded",
        message: "hf-l40s reached its daily cap",
        node: "hf-l40s",
      }),
    ).toEqual({
      status: 429,
      body: { error: "hf-l40s reached its daily cap", code: "budget_exceeded", node: "hf-l40s" },
    });
    expect(pairErrorReply("ollama", { code: "model_not_found", message: "no node serves x" })).toEqual({
      status: 404,
      body: { error: "no node serves x", code: "model_not_found" },
    });
  });

  it("keeps every code's status the same in both dialects", () => {
    for (const code of Object.keys(PAIR_ERROR_CODES) as PairErrorCode[]) {
      const error = { code, message: code };
      expect(pairErrorReply("openai", error).status).toBe(pairErrorReply("ollama", error).status);
    }
  });

  it("turns a validation refusal into invalid_request with the path as param", () => {
    const result = validateOpenAIChatRequest({ model: "m", messages: [{ role: "user", content: 1 }] });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(pairErrorToOpenAI(pairErrorOfInvalidRequest(result.error))).toEqual({
      status: 400,
      body: {
        error: {
          message: "messages[0].content: expected a string or an array of content parts, got an integer",
          type: "invalid_request_error",
          param: "messages[0].content",
          code: "invalid_request",
        },
      },
    });
  });
});

describe("engine errors across dialects", () => {
  it("turns an Ollama engine's {error} into PAIR's OpenAI envelope, code from the status", () => {
    expect(
      ollamaErrorToOpenAI(404, { error: 'model "llama9" not found, try pulling it first' }, "node-a"),
    ).toEqual({
      status: 404,
      body: {
        error: {
          message: 'the engine answered HTTP 404: model "llama9" not found, try pulling it first',
          type: "invalid_request_error",
          param: null,
          code: "model_not_found",
          node: "node-a",
        },
      },
    });
    expect(
      ollamaErrorToOpenAI(500, { error: "llama runner process has terminated: exit status 2" }).body.error,
    ).toMatchObject({
      code: "upstream_error",
      type: "server_error",
    });
    expect(
      ollamaErrorToOpenAI(503, { error: "server busy, please try again.  maximum pending requests exceeded" })
        .status,
    ).toBe(502);
  });

  it("turns an OpenAI engine's envelope (current and older vLLM, auth middleware) into PAIR's Ollama body", () => {
    const context = {
      error: {
        message: "This model's maximum context length is 4096 tokens.",
        type: "BadRequestError",
        param: null,
        code: 400,
      },
    };
    expect(openAIErrorToOllama(400, context)).toEqual({
      status: 400,
      body: {
        error: "the engine answered HTTP 400: This model's maximum context length is 4096 tokens.",
        code: "invalid_request",
      },
    });
    const flat = {
      object: "error",
      message: "The model `x` does not exist.",
      type: "NotFoundError",
      param: "model",
      code: 404,
    };
    expect(openAIErrorToOllama(404, flat).body).toMatchObject({
      code: "model_not_found",
      error: expect.stringContaining("does not exist") as unknown,
    });
    expect(openAIErrorToOllama(401, { error: "Unauthorized" }, "runpod-a40")).toEqual({
      status: 502,
      body: {
        error: "the engine answered HTTP 401: Unauthorized",
        code: "credential_rejected",
        node: "runpod-a40",
      },
    });
  });

  it("reads the other shapes engines and proxies answer with", () => {
    const message = (status: number, body: unknown) => pairErrorOfEngineReply(status, body).message;
    expect(message(503, { error: ["warming up", "retry later"] })).toContain("warming up; retry later");
    expect(message(500, { errors: [{ message: "boom" }] })).toContain("boom");
    expect(message(502, "Bad Gateway")).toContain("Bad Gateway");
    expect(message(524, "<html><body>A timeout occurred</body></html>")).toBe(
      "the engine answered HTTP 524: HTTP 524 (an HTML page)",
    );
    expect(message(422, { detail: [{ loc: ["body", "model"], msg: "field required" }] })).toContain(
      "field required",
    );
    expect(message(500, {})).toBe("the engine answered HTTP 500: HTTP 500");
    expect(message(500, { error: "x".repeat(5_000) }).length).toBeLessThan(MAX_ENGINE_MESSAGE_CHARS + 60);
  });

  it("recognises a mid-stream error item in either dialect and nothing else", () => {
    expect(streamErrorMessageOf({ error: "runner died" })).toBe("runner died");
    expect(streamErrorMessageOf({ error: { message: "OOM", type: "x", code: 500 } })).toBe("OOM");
    expect(streamErrorMessageOf({ object: "error", message: "engine dead", type: "x", code: 500 })).toBe(
      "engine dead",
    );
    expect(streamErrorMessageOf({ choices: [] })).toBeUndefined();
    expect(streamErrorMessageOf({ error: null })).toBeUndefined();
    expect(streamErrorMessageOf("error")).toBeUndefined();
  });
});
