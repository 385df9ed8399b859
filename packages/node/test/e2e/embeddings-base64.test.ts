// Base64 embeddings stay base64: an OpenAI engine that ignores `encoding_format` answers floats,
// which the node re-encodes, so the openai client (base64 by default) decodes the true vector.
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCluster, type Cluster } from "./node-harness.js";

let c: Cluster;
beforeAll(async () => {
  c = await startCluster([
    {
      name: "floats-1",
      api: "openai",
      models: [{ name: "embed-1", embeddingDimensions: 8 }],
      ignoreEncodingFormat: true,
    },
  ]);
});
afterAll(async () => c.close());

const openai = () => new OpenAI({ baseURL: `${c.node.url}/v1`, apiKey: "unused", maxRetries: 0 });

/** The vector as the engine itself answers it (floats). */
async function engineFloats(input: string): Promise<number[]> {
  const res = await fetch(`${c.engines.get("floats-1")!.url}/v1/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "embed-1", input }),
  });
  const body = (await res.json()) as { data: { embedding: number[] }[] };
  return body.data[0]!.embedding;
}

describe("base64 embeddings from an engine that answers floats", () => {
  it("the openai client (base64 by default) decodes the engine's vector", async () => {
    const r = await openai().embeddings.create({ model: "embed-1", input: ["abc", "def"] });
    expect(r.data).toHaveLength(2);
    expect(r.data[0]?.embedding).toEqual((await engineFloats("abc")).map(Math.fround));
    expect(r.data[1]?.embedding).toEqual((await engineFloats("def")).map(Math.fround));
    expect(r.data[0]?.embedding.some((x) => x !== 0)).toBe(true);
  });

  it("answers a base64 string on the wire, and floats when floats were asked", async () => {
    const ask = async (encoding_format: string) => {
      const res = await fetch(`${c.node.url}/v1/embeddings`, {
        method: "POST",
        body: JSON.stringify({ model: "embed-1", input: "abc", encoding_format }),
      });
      return ((await res.json()) as { data: { embedding: unknown }[] }).data[0]?.embedding;
    };
    const b64 = await ask("base64");
    expect(typeof b64).toBe("string");
    expect(Buffer.from(b64 as string, "base64").length).toBe(8 * 4);
    expect(await ask("float")).toEqual(await engineFloats("abc"));
  });
});
