// The dashboard on a real node's client port, over HTTP: `pair ui` prints a one-time login URL, the
// code becomes an HttpOnly SameSite=Strict cookie, /ui is served only with it (CSP default-src
// 'self'), the admin API takes the cookie for reads and, with the CSRF token from its own origin,
// for changes — and refuses everything else.
import { HOLDING_RUNTIME } from "@pair/cluster";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey, type LoopbackPolicy } from "../../src/auth/index.js";
import { parseConfig } from "../../src/config/index.js";
import { startNode } from "../../src/node.js";
import { runCli } from "../cli/cli-harness.js";
import { startTestNodeWith, type TestNode } from "../cluster/node-pair-harness.js";

let dir: string;
let node: TestNode;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pair-ui-http-"));
  const ui = join(dir, "dist");
  mkdirSync(join(ui, "assets"), { recursive: true });
  writeFileSync(
    join(ui, "index.html"),
    '<!doctype html><script type="module" src="/ui/assets/app-1.js"></script>',
  );
  writeFileSync(join(ui, "assets", "app-1.js"), "export {};\n");
  writeFileSync(join(ui, "assets", "app-1.css"), "body{}\n");
  writeFileSync(join(dir, "secret.txt"), "not for the browser\n");
  node = await startTestNodeWith("ui-node", { uiDir: ui });
});
afterAll(async () => {
  await node?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `pair ui --json` against the node: the login URL. */
async function loginUrl(): Promise<string> {
  const r = await runCli(["ui", "--json", "--config", node.configFile]);
  expect(r.code).toBe(0);
  const out = JSON.parse(r.stdout) as { url: string; expires_at: string };
  expect(Date.parse(out.expires_at)).toBeGreaterThan(Date.now());
  return out.url;
}

/** Sign in: spend a code, return the cookie pair `name=value`. */
async function signIn(): Promise<string> {
  const res = await fetch(await loginUrl(), { redirect: "manual" });
  expect(res.status).toBe(303);
  const setCookie = res.headers.get("set-cookie") ?? "";
  return setCookie.split(";")[0] ?? "";
}

/** A raw GET (fetch would normalize `..` away). */
function rawGet(path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port: node.node.port, path, headers }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("pair ui and the login link", () => {
  it("prints a URL on the node's address; the code becomes a session cookie once", async () => {
    const text = await runCli(["ui", "--config", node.configFile]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(`\\n  http://127\\.0\\.0\\.1:${node.node.port}/ui/login\\?code=[A-Za-z0-9_-]{43}\\n`),
    );

    const url = await loginUrl();
    // A HEAD (a link preview) neither signs in nor spends the code.
    const head = await fetch(url, { method: "HEAD", redirect: "manual" });
    expect(head.status).toBe(405);
    expect(head.headers.get("set-cookie")).toBeNull();
    const res = await fetch(url, { redirect: "manual" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/ui/");
    expect(res.headers.get("set-cookie")).toMatch(
      /^pair_ui_[A-Za-z0-9]+=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=43200$/,
    );
    // The session id is not the code.
    expect(res.headers.get("set-cookie")).not.toContain(new URL(url).searchParams.get("code"));

    const again = await fetch(url, { redirect: "manual" });
    expect(again.status).toBe(401);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(await again.text()).toMatch(/unknown or was already used.*pair ui/s);
  });

  it("a made-up code opens nothing", async () => {
    const res = await fetch(`${node.node.url}/ui/login?code=${"A".repeat(43)}`, { redirect: "manual" });
    expect(res.status).toBe(401);
    expect(res.headers.get("set-cookie")).toBeNull();
  });
});

describe("the /ui files", () => {
  it("are refused without a session, with a page saying how to sign in", async () => {
    for (const path of ["/ui", "/ui/", "/ui/assets/app-1.js"]) {
      const res = await fetch(`${node.node.url}${path}`);
      expect(res.status, path).toBe(401);
      expect(res.headers.get("content-security-policy")).toMatch(/^default-src 'self'/);
      const body = await res.text();
      expect(body).toMatch(/Run `pair ui`/);
      expect(body).not.toMatch(/<script/);
    }
  });

  it("are served with a session: content types, CSP default-src 'self', no framing", async () => {
    const cookie = await signIn();
    const index = await fetch(`${node.node.url}/ui/`, { headers: { cookie } });
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(index.headers.get("content-security-policy")).toBe(
      "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(index.headers.get("x-frame-options")).toBe("DENY");
    expect(index.headers.get("cache-control")).toBe("no-store");
    expect(await index.text()).toContain("/ui/assets/app-1.js");
    const js = await fetch(`${node.node.url}/ui/assets/app-1.js`, { headers: { cookie } });
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("x-content-type-options")).toBe("nosniff");
    expect(js.headers.get("cache-control")).toMatch(/immutable/);
    const css = await fetch(`${node.node.url}/ui/assets/app-1.css`, { headers: { cookie } });
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect((await fetch(`${node.node.url}/ui/nope.js`, { headers: { cookie } })).status).toBe(404);
  });

  it("never include anything outside the dashboard folder", async () => {
    const cookie = await signIn();
    for (const path of [
      "/ui/..%2fsecret.txt",
      "/ui/%2e%2e/secret.txt",
      "/ui/../secret.txt",
      "/ui/..%2f..%2fdata%2fadmin.token",
    ]) {
      const res = await rawGet(path, { cookie });
      expect(res.status, path).not.toBe(200);
      expect(res.body).not.toContain("not for the browser");
    }
  });

  it("answer 503 saying how to build them when the dashboard is not built", async () => {
    const bare = await startTestNodeWith("ui-unbuilt", { uiDir: join(dir, "missing") });
    try {
      const r = await runCli(["ui", "--json", "--config", bare.configFile]);
      const { url } = JSON.parse(r.stdout) as { url: string };
      const login = await fetch(url, { redirect: "manual" });
      const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      const res = await fetch(`${bare.node.url}/ui/`, { headers: { cookie } });
      expect(res.status).toBe(503);
      expect(await res.text()).toMatch(/npm run build:ui/);
    } finally {
      await bare.close();
    }
  });
});

describe("the admin API with a dashboard session", () => {
  it("reads with the cookie; without it, or with a stale one, 401", async () => {
    const cookie = await signIn();
    const nodes = await fetch(`${node.node.url}/pair/v1/nodes`, { headers: { cookie } });
    expect(nodes.status).toBe(200);
    expect(((await nodes.json()) as { name: string }[])[0]?.name).toBe("ui-node");
    const none = await fetch(`${node.node.url}/pair/v1/nodes`);
    expect(none.status).toBe(401);
    const stale = await fetch(`${node.node.url}/pair/v1/nodes`, {
      headers: { cookie: `${cookie.split("=")[0]}=${"B".repeat(43)}` },
    });
    expect(stale.status).toBe(401);
    expect(((await stale.json()) as { error: { message: string } }).error.message).toMatch(/pair ui/);
  });

  it("changes only with the session's CSRF token from the node's own origin", async () => {
    const cookie = await signIn();
    const session = (await (
      await fetch(`${node.node.url}/pair/v1/ui/session`, { headers: { cookie } })
    ).json()) as {
      node: string;
      csrf_token: string;
    };
    expect(session.node).toBe("ui-node");
    const origin = `http://127.0.0.1:${node.node.port}`;
    const pin = (headers: Record<string, string>) =>
      fetch(`${node.node.url}/pair/v1/pin`, {
        method: "POST",
        headers: { cookie, "content-type": "application/json", ...headers },
        body: "{}",
      });
    const noToken = await pin({ origin });
    expect(noToken.status).toBe(403);
    expect(((await noToken.json()) as { error: { code: string } }).error.code).toBe("csrf_refused");
    expect((await pin({ origin: "http://evil.example", "x-pair-csrf": session.csrf_token })).status).toBe(
      403,
    );
    expect((await pin({ "x-pair-csrf": session.csrf_token })).status).toBe(403);
    const ok = await pin({ origin, "x-pair-csrf": session.csrf_token, "sec-fetch-site": "same-origin" });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { pin: string }).pin).toMatch(/^\d{6}$/);
  });

  it("cannot mint login codes (only the admin token can), and signs out for good", async () => {
    const cookie = await signIn();
    const session = (await (
      await fetch(`${node.node.url}/pair/v1/ui/session`, { headers: { cookie } })
    ).json()) as {
      csrf_token: string;
    };
    const headers = {
      cookie,
      origin: `http://127.0.0.1:${node.node.port}`,
      "x-pair-csrf": session.csrf_token,
      "content-type": "application/json",
    };
    const mint = await fetch(`${node.node.url}/pair/v1/ui/login-code`, {
      method: "POST",
      headers,
      body: "{}",
    });
    expect(mint.status).toBe(403);
    const out = await fetch(`${node.node.url}/pair/v1/ui/logout`, { method: "POST", headers, body: "{}" });
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toMatch(/Max-Age=0/);
    expect((await fetch(`${node.node.url}/pair/v1/nodes`, { headers: { cookie } })).status).toBe(401);
    expect((await fetch(`${node.node.url}/ui/`, { headers: { cookie } })).status).toBe(401);
  });
});

describe("beyond loopback", () => {
  // Tests bind loopback only: the policy pretends 127.0.0.1 is beyond it (every caller is remote).
  const beyond: LoopbackPolicy = { isLoopbackHost: () => false, isLoopbackPeer: () => false };

  it("an API key opens neither the dashboard nor the admin API; a session from a login code does", async () => {
    const data = mkdtempSync(join(tmpdir(), "pair-ui-beyond-"));
    try {
      const key = await createApiKey(data, "app", {
        runtime: HOLDING_RUNTIME,
        randomBytes: (n) => randomBytes(n),
      });
      const yaml = ["node:", `  data_dir: ${data}`, "  listen: 127.0.0.1:1", "engines: []"].join("\n");
      const config = parseConfig(yaml, "t.yaml", { homeDir: data, hostName: "beyond" });
      const n = await startNode({
        config,
        overrides: { port: 0 },
        seams: { loopback: beyond, uiDir: join(dir, "dist") },
      });
      try {
        const withKey = { authorization: `Bearer ${key.key}` };
        expect((await fetch(`${n.url}/v1/models`, { headers: withKey })).status).toBe(200);
        expect((await fetch(`${n.url}/ui/`, { headers: withKey })).status).toBe(401);
        expect((await fetch(`${n.url}/pair/v1/nodes`, { headers: withKey })).status).toBe(401);

        const { code } = n.uiSessions.issueCode();
        const login = await fetch(`${n.url}/ui/login?code=${code}`, { redirect: "manual" });
        const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
        expect((await fetch(`${n.url}/ui/`, { headers: { cookie } })).status).toBe(200);
        expect((await fetch(`${n.url}/pair/v1/nodes`, { headers: { cookie } })).status).toBe(200);
      } finally {
        await n.close(0);
      }
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
