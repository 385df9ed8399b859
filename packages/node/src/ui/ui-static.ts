/**
 * The dashboard's built files (packages/dashboard/dist) as the node serves them under /ui/: only
 * files inside that folder, with their content type, `default-src 'self'` as the Content Security
 * Policy (no inline script, nothing from another origin), no framing, no referrer, no sniffing.
 * When the folder has not been built, /ui answers 503 saying how to build it. Also the small plain
 * pages the sign-in flow answers with (same headers).
 * Must not know: sessions, routes other than the file paths, what the app does.
 */

import { readFile, stat } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** Where `npm run build:ui` writes the dashboard (this file: packages/node/src/ui/ui-static.ts). */
export const DEFAULT_UI_DIR = fileURLToPath(new URL("../../../dashboard/dist/", import.meta.url));

export const UI_CSP = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
  ".map": "application/json; charset=utf-8",
};

/** Largest file served (the bundle is far smaller; anything bigger is not ours). */
const MAX_FILE_BYTES = 8 * 1024 * 1024;

/** Headers on every /ui answer. */
export function uiHeaders(contentType: string, cache: "no-store" | "immutable"): Record<string, string> {
  return {
    "content-type": contentType,
    "content-security-policy": UI_CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": cache === "immutable" ? "public, max-age=31536000, immutable" : "no-store",
  };
}

/**
 * Serve `/ui/<rest>` from `uiDir` (`rest` empty: index.html). Never rejects.
 * Vite names assets by their content hash, so everything under assets/ may be cached for good.
 */
export async function serveUiFile(uiDir: string, rest: string, head: boolean, res: ServerResponse) {
  const root = resolve(uiDir);
  const index = join(root, "index.html");
  if (!(await isFile(index)))
    return sendUiPage(
      res,
      503,
      "Dashboard not built",
      `The dashboard files are missing from ${root}. Build them with \`npm run build:ui\` in the PAIR ` +
        "repository (npm ci does it too), then reload this page.",
    );
  let decoded: string;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    return sendUiPage(res, 400, "Bad path", "That address is not a valid path.");
  }
  const file = decoded === "" ? index : resolve(root, decoded);
  const type = CONTENT_TYPES[extname(file).toLowerCase()];
  if ((file !== root && !file.startsWith(root + sep)) || type === undefined || !(await isFile(file)))
    return sendUiPage(res, 404, "Not found", `No dashboard file /ui/${rest}. Open /ui/ for the dashboard.`);
  const body = await readFile(file);
  res.writeHead(200, {
    ...uiHeaders(type, decoded.startsWith("assets/") ? "immutable" : "no-store"),
    "content-length": String(body.length),
  });
  res.end(head ? undefined : body);
}

/** A small HTML page (no script) with a title and one paragraph. */
export function sendUiPage(
  res: ServerResponse,
  status: number,
  title: string,
  text: string,
  extraHeaders: Record<string, string> = {},
): void {
  const html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escapeHtml(title)} · PAIR</title></head><body><main><h1>${escapeHtml(title)}</h1>` +
    `<p>${escapeHtml(text)}</p></main></body></html>`;
  res.writeHead(status, {
    ...uiHeaders("text/html; charset=utf-8", "no-store"),
    "content-length": String(Buffer.byteLength(html)),
    ...extraHeaders,
  });
  res.end(html);
}

async function isFile(path: string): Promise<boolean> {
  try {
    const s = await stat(path);
    return s.isFile() && s.size <= MAX_FILE_BYTES;
  } catch {
    return false;
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
