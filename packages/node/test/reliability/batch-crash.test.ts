// A batch survives its node being SIGKILLed: a real `pair serve` child runs a 60-line batch over an
// engine emulator and is killed at three points (just after the batch was created, mid-way, near the
// end) and started again on the same data dir each time. The batch completes; every custom_id is in
// the output file exactly once; the lines cut in flight were run again, and the batch says how many.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEngineEmulator, type EngineEmulator } from "@pair/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../support/eventually.js";
import { ServeChild } from "../support/serve-child.js";
import { submitChatBatch } from "../support/batch-submit.js";

const LINES = 60;
let dir: string;
let engine: EngineEmulator;
let node: ServeChild;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pair-batch-crash-"));
  // 8 tokens 25 ms apart: a line takes about 200 ms, so a kill always finds some in flight.
  engine = await startEngineEmulator({
    api: "ollama",
    name: "crash-ollama",
    models: [{ name: "m1:8b", maxTokens: 8 }],
    tokenDelayMs: 25,
  });
  node = await ServeChild.create({ name: "crash", dir, engineUrl: engine.url });
  await node.start();
});

afterAll(async () => {
  await node.kill();
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

interface BatchView {
  status: string;
  request_counts: { total: number; completed: number; failed: number };
  output_file_id: string | null;
  error_file_id: string | null;
  pair: { reruns: number; running: number };
}

async function batch(id: string): Promise<BatchView> {
  return (await (await fetch(`${node.url}/v1/batches/${id}`)).json()) as BatchView;
}

describe("a batch across SIGKILLs of its node", () => {
  it("completes with every custom_id once, the cut lines run again and counted", async () => {
    const id = await submitChatBatch(node.url, "m1:8b", LINES, (i) => `line-${i}`);

    const killAt = [1, 25, LINES - 5];
    for (const completed of killAt) {
      await until(async () => (await batch(id)).request_counts.completed >= completed, 30_000).catch(
        async (e: unknown) => {
          const b = await batch(id);
          const errors =
            b.error_file_id === null
              ? ""
              : await (await fetch(`${node.url}/v1/files/${b.error_file_id}/content`)).text();
          throw new Error(`${String(e)}: ${JSON.stringify(b)}\n${errors.slice(0, 600)}\n${node.output}`);
        },
      );
      const before = await batch(id);
      await node.kill();
      await node.start();
      // Nothing answered before the kill is lost or run again.
      expect((await batch(id)).request_counts.completed).toBeGreaterThanOrEqual(
        before.request_counts.completed,
      );
    }
    await until(async () => (await batch(id)).status === "completed", 30_000);
    const done = await batch(id);
    expect(done.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
    expect(done.error_file_id).toBeNull();
    const output = (await (await fetch(`${node.url}/v1/files/${done.output_file_id}/content`)).text())
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { custom_id: string; response: { status_code: number } });
    const ids = output.map((l) => l.custom_id);
    expect(ids.length).toBe(LINES);
    expect(new Set(ids).size).toBe(LINES);
    expect(output.every((l) => l.response.status_code === 200)).toBe(true);
    // Each kill cut lines in flight: they ran again (a cut line may not have reached the engine yet).
    expect(done.pair.reruns).toBeGreaterThanOrEqual(killAt.length);
    expect(engine.stats().requests).toBeGreaterThan(LINES);
    expect(engine.stats().requests).toBeLessThanOrEqual(LINES + done.pair.reruns);
    expect(node.output).toContain("line(s) cut by the last stop run again");
  }, 120_000);
});
