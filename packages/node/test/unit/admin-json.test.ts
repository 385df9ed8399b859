// The admin API's body reader: a stalled body is a 408 request_timeout (as on the client routes),
// a bad one a 400 invalid_request.
import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BodyRefusal, readJsonObject } from "../../src/http/admin-json.js";
import { BODY_IDLE_TIMEOUT_MS } from "../../src/http/request-body.js";

function request(): PassThrough & IncomingMessage {
  const stream = new PassThrough() as PassThrough & IncomingMessage;
  Object.assign(stream, { headers: {} });
  return stream;
}

afterEach(() => vi.useRealTimers());

describe("readJsonObject", () => {
  it("gives up on a body that stops arriving with 408 request_timeout", async () => {
    vi.useFakeTimers();
    const req = request();
    const read = readJsonObject(req);
    req.write('{"name":');
    await vi.advanceTimersByTimeAsync(BODY_IDLE_TIMEOUT_MS + 10);
    const refused = await read;
    expect(refused).toBeInstanceOf(BodyRefusal);
    expect(refused).toMatchObject({ status: 408, code: "request_timeout" });
  });

  it("reads an object; refuses other JSON with 400 invalid_request", async () => {
    const ok = request();
    const read = readJsonObject(ok);
    ok.end('{"name":"gpu"}');
    expect(await read).toEqual({ name: "gpu" });
    const list = request();
    const refused = readJsonObject(list);
    list.end("[1,2]");
    expect(await refused).toMatchObject({ status: 400, code: "invalid_request" });
  });
});
