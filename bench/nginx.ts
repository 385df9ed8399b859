/**
 * nginx as a reverse proxy for the comparison benchmark: the Debian package's binary, started by the
 * bench (not the system service) on 127.0.0.1 with a generated config in a temp dir — one process
 * (`master_process off`, the same single event loop as a Node process), keep-alive to the upstreams,
 * `proxy_buffering off` so every chunk is passed on as it comes. Removed when stopped.
 * Must not know: the load, the report, what the upstreams are.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** What to do when nginx is absent. */
export const NGINX_MISSING =
  "nginx is not installed: on Debian/Ubuntu run `sudo apt-get install -y nginx` (the benchmark starts " +
  "its own nginx on loopback with a generated config; the system service is not used), or pass --no-nginx";

const CANDIDATES = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"];
const READY_TIMEOUT_MS = 10_000;

export function findNginx(): string | undefined {
  return CANDIDATES.find((p) => existsSync(p));
}

export interface RunningNginx {
  readonly url: string;
  readonly pid: number;
  readonly version: string;
  stop(): Promise<void>;
  /** Last resort, synchronous (for `process.on("exit")`). */
  kill(): void;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** The config: `/PREFIX/...` goes to `routes[PREFIX]` (an `http://host:port` URL) with the prefix removed. */
export function nginxConfig(dir: string, port: number, routes: Readonly<Record<string, string>>): string {
  const upstreams = Object.entries(routes).map(
    ([prefix, url]) => `  upstream u_${prefix} { server ${new URL(url).host}; keepalive 256; }`,
  );
  const locations = Object.keys(routes).map((prefix) =>
    [
      `    location /${prefix}/ {`,
      `      proxy_pass http://u_${prefix}/;`,
      "      proxy_http_version 1.1;",
      '      proxy_set_header Connection "";',
      "      proxy_buffering off;",
      "      proxy_request_buffering off;",
      "    }",
    ].join("\n"),
  );
  return [
    "daemon off;",
    "master_process off;",
    "worker_processes 1;",
    `pid ${join(dir, "nginx.pid")};`,
    `error_log ${join(dir, "error.log")} warn;`,
    "events { worker_connections 4096; }",
    "http {",
    "  access_log off;",
    ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `  ${t}_temp_path ${join(dir, t)};`),
    "  keepalive_requests 1000000;",
    ...upstreams,
    "  server {",
    `    listen 127.0.0.1:${port};`,
    ...locations,
    "  }",
    "}",
  ].join("\n");
}

export async function startNginx(
  binary: string,
  routes: Readonly<Record<string, string>>,
): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), "pair-bench-nginx-"));
  const port = await freePort();
  const conf = join(dir, "nginx.conf");
  writeFileSync(conf, nginxConfig(dir, port, routes));
  mkdirSync(join(dir, "logs"));
  let stderr = "";
  const child: ChildProcess = spawn(binary, ["-p", dir, "-c", conf, "-e", join(dir, "error.log")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once("exit", () => {
      exited = true;
      resolve();
    }),
  );
  const errorLog = () => {
    try {
      return readFileSync(join(dir, "error.log"), "utf8").slice(-500);
    } catch {
      return "";
    }
  };
  const deadline = performance.now() + READY_TIMEOUT_MS;
  while (!(await accepts(port))) {
    if (exited || performance.now() > deadline) {
      child.kill("SIGKILL");
      const why = `${stderr}${errorLog()}`.trim();
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`nginx (${binary}) did not start on 127.0.0.1:${port}: ${why || "no message"}`);
    }
    await sleep(20);
  }
  const version = await new Promise<string>((resolve) => {
    const v = spawn(binary, ["-v"], { stdio: ["ignore", "ignore", "pipe"] });
    let out = "";
    v.stderr.on("data", (d: Buffer) => (out += d.toString()));
    v.once("exit", () => resolve(out.trim().replace(/^nginx version: /, "")));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid ?? -1,
    version,
    stop: async () => {
      if (!exited) child.kill("SIGQUIT");
      await Promise.race([exit, sleep(5_000)]);
      if (!exited) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
    kill: () => {
      if (!exited) child.kill("SIGKILL");
    },
  };
}
