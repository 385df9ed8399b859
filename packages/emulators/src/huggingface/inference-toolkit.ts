/**
 * What an endpoint's container serves, by its `model.image` (reference §2.5): the OpenAI-compatible
 * engines (`tgi`, `vLLM`, `llamacpp`, `sGLang`, and `custom` with a declared `port`) serve `/v1`; HF's
 * default `{"huggingface": {}}` is the Inference Toolkit, which answers only `/`, `/health` and
 * `/predict` (huggingface-inference-toolkit's webservice: `GET /health`, `POST /` and `/predict`
 * with `{"inputs": …}`), so a client that expects `/v1` gets 404 from it.
 * Must not know: endpoint states, access rules (the data plane checks them first).
 */

import type { IncomingMessage, ServerResponse } from "node:http";

const OPENAI_ENGINES = new Set(["tgi", "vLLM", "llamacpp", "sGLang"]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether an endpoint with this `model.image` serves the OpenAI API under `/v1`. */
export function servesOpenAi(image: unknown): boolean {
  if (!isObject(image)) return false;
  const [engine] = Object.keys(image);
  if (engine === undefined) return false;
  if (OPENAI_ENGINES.has(engine)) return true;
  const custom = image[engine];
  return engine === "custom" && isObject(custom) && typeof custom["port"] === "number";
}

/** The endpoint's `model.image` as stored (HF's default when none was given). */
export function imageOf(json: Readonly<Record<string, unknown>>): unknown {
  const model = json["model"];
  return isObject(model) ? (model["image"] ?? { huggingface: {} }) : { huggingface: {} };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** The Toolkit's routes; a text-generation pipeline answers `[{"generated_text": …}]`. */
export function serveToolkit(req: IncomingMessage, res: ServerResponse, repository: string): void {
  const path = (req.url ?? "/").split("?")[0] ?? "/";
  if (req.method === "GET" && (path === "/health" || path === "/")) return send(res, 200, "OK");
  if (req.method === "POST" && (path === "/" || path === "/predict")) {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let inputs: unknown;
      try {
        inputs = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>)["inputs"];
      } catch {
        inputs = undefined;
      }
      if (typeof inputs !== "string") return send(res, 400, { error: 'expected {"inputs": "<text>"}' });
      send(res, 200, [{ generated_text: `${inputs} (${repository})` }]);
    });
    return;
  }
  send(res, 404, { error: `Not Found: the Inference Toolkit serves /, /health and /predict, not ${path}` });
}
