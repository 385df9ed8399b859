// Progress of a long wait: one line rewritten each update on a terminal (a new state keeps the old
// line), a line per state and one every 30 s between elsewhere.
import { describe, expect, it } from "vitest";
import { HEARTBEAT_MS, liveLine } from "../../src/cli/live-line.js";

function world(terminal: boolean) {
  let now = 0;
  let out = "";
  const line = liveLine({ stdout: (t) => void (out += t), nowMs: () => now, stdoutIsTerminal: terminal });
  return {
    line,
    tick: (ms: number) => void (now += ms),
    out: () => out,
  };
}

describe("live line", () => {
  it("on a terminal: rewritten in place each update, kept on a new state, ended by finish", () => {
    const w = world(true);
    w.line.update("pending", "pending (0:00, $0.00)");
    w.tick(1_000);
    w.line.update("pending", "pending (0:01, $0.00)");
    w.line.update("initializing", "initializing (0:02, $0.01)");
    w.line.finish("running (0:03, $0.01) — done");
    expect(w.out()).toBe(
      "\r\u001b[Kpending (0:00, $0.00)" +
        "\r\u001b[Kpending (0:01, $0.00)" +
        "\ninitializing (0:02, $0.01)" +
        "\r\u001b[Krunning (0:03, $0.01) — done\n",
    );
  });

  it("on a terminal, finish without text ends the line; a second finish writes nothing", () => {
    const w = world(true);
    w.line.update("pending", "pending");
    w.line.finish();
    w.line.finish();
    expect(w.out()).toBe("\r\u001b[Kpending\n");
  });

  it("elsewhere: a line per state, and one every 30 s while the state stays", () => {
    const w = world(false);
    w.line.update("pending", "pending 0");
    for (let s = 1; s <= 65; s += 1) {
      w.tick(1_000);
      w.line.update("pending", `pending ${s}`);
    }
    w.line.update("initializing", "initializing 65");
    w.tick(1_000);
    w.line.update("initializing", "initializing 66");
    w.line.finish("running");
    expect(HEARTBEAT_MS).toBe(30_000);
    expect(w.out().split("\n")).toEqual([
      "pending 0",
      "pending 30",
      "pending 60",
      "initializing 65",
      "running",
      "",
    ]);
  });

  it("elsewhere, finish without text writes nothing", () => {
    const w = world(false);
    w.line.update("pending", "pending");
    w.line.finish();
    expect(w.out()).toBe("pending\n");
  });
});
