/**
 * Test harness for the Hugging Face emulator: starts it over HTTPS with a throwaway CA and calls it
 * as a client trusting that CA would (undici, verification on). No assertions here.
 */

import { createTestCa } from "@pair/testkit";
import { Agent, request } from "undici";
import {
  startHuggingFaceEmulator,
  type HuggingFaceEmulator,
  type HuggingFaceEmulatorOptions,
} from "../../src/index.js";

export const ALICE = "hf_alice_token_0001";
export const BOB = "hf_bob_token_00002";
export const READER = "hf_alice_readonly1";

/** The parts of HF's JSON bodies the tests read (endpoint, list, error). */
export interface HfJson {
  readonly error?: string;
  readonly name?: string;
  readonly type?: string;
  readonly healthRoute?: string;
  readonly items?: readonly HfJson[];
  readonly model?: {
    readonly repository: string;
    readonly secrets?: Record<string, string>;
    readonly task?: string;
  };
  readonly compute?: { readonly id?: string; readonly instanceSize?: string };
  readonly status?: {
    readonly state: string;
    readonly message: string;
    readonly url: string | null;
    readonly createdAt: string;
    readonly updatedAt: string;
  };
  readonly [key: string]: unknown;
}

export interface Reply {
  readonly status: number;
  readonly json: HfJson;
  readonly text: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

export interface Harness {
  readonly emu: HuggingFaceEmulator;
  readonly agent: Agent;
  call(
    method: string,
    url: string,
    init?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Reply>;
  close(): Promise<void>;
}

let caPromise: ReturnType<typeof createTestCa> | undefined;
let leafPromise: Promise<{ certPem: string; keyPem: string }> | undefined;

/** One CA and leaf per test file (generating them costs a few ms each). */
export async function testTls(): Promise<{ caPem: string; key: string; cert: string }> {
  caPromise ??= createTestCa();
  const ca = await caPromise;
  leafPromise ??= ca.issue();
  const leaf = await leafPromise;
  return { caPem: ca.certPem, key: leaf.keyPem, cert: leaf.certPem };
}

export async function startHarness(options: HuggingFaceEmulatorOptions = {}): Promise<Harness> {
  const tls = await testTls();
  const emu = await startHuggingFaceEmulator({
    tls: { key: tls.key, cert: tls.cert },
    tokens: {
      [ALICE]: { namespace: "alice", orgs: ["acme"] },
      [BOB]: { namespace: "bob" },
      [READER]: { namespace: "alice", role: "read" },
    },
    timings: { pendingMs: 30_000, initializingMs: 120_000, scaleUpMs: 60_000, updatingMs: 60_000 },
    ...options,
  });
  const agent = new Agent({ connect: { ca: tls.caPem } });
  return {
    emu,
    agent,
    async call(method, url, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      if (init.token) headers["authorization"] = `Bearer ${init.token}`;
      if (init.body !== undefined) headers["content-type"] = "application/json";
      const res = await request(url, {
        method: method as "GET",
        headers,
        dispatcher: agent,
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
      const text = await res.body.text();
      let json: HfJson = {};
      try {
        json = JSON.parse(text) as HfJson;
      } catch {
        // not JSON: tests read `text`
      }
      return { status: res.statusCode, json, text, headers: res.headers };
    },
    async close() {
      await emu.close();
      await agent.close();
    },
  };
}

/** A create body for an L4 endpoint serving a small model. */
export function createBody(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name,
    type: "private",
    provider: { vendor: "aws", region: "us-east-1" },
    compute: {
      accelerator: "gpu",
      instanceType: "nvidia-l4",
      instanceSize: "x1",
      scaling: { minReplica: 0, maxReplica: 1, scaleToZeroTimeout: 15 },
    },
    model: {
      repository: "Qwen/Qwen3-0.6B",
      framework: "pytorch",
      task: "text-generation",
      image: { vLLM: { url: "vllm/vllm-openai:v0.23.0", port: 8000, healthRoute: "/health" } },
      secrets: { HF_TOKEN: "hf_secret_in_env" },
    },
    ...extra,
  };
}

export const MINUTE = 60_000;

/** Creates an endpoint and advances virtual time until it runs (pending 30 s + initializing 120 s). */
export async function runningEndpoint(
  h: Harness,
  name: string,
  extra: Record<string, unknown> = {},
): Promise<{ url: string; createdAt: string }> {
  const created = await h.call("POST", `${h.emu.endpointsApiUrl}/v2/endpoint/alice`, {
    token: ALICE,
    body: createBody(name, extra),
  });
  if (created.status !== 200) throw new Error(`create failed: ${created.status} ${created.text}`);
  h.emu.advance(150_000);
  const got = await h.call("GET", `${h.emu.endpointsApiUrl}/v2/endpoint/alice/${name}`, { token: ALICE });
  if (!got.json.status?.url) throw new Error(`not running: ${got.text}`);
  return { url: got.json.status.url, createdAt: got.json.status.createdAt };
}
