/**
 * Reading one secret from standard input for `pair credential set`: everything piped in (to its
 * end), or on a terminal a line typed at a prompt that does not echo (raw mode: Enter ends it,
 * Backspace erases, Ctrl-C cancels, Ctrl-D ends it, cursor keys are ignored). Then the one rule for
 * what was read: one trailing newline (`\n` or `\r\n`) is dropped and nothing else is trimmed; an
 * empty secret, or one still holding a line break, is refused. Nothing here echoes or repeats the
 * secret; the prompt goes to stderr.
 * Must not know: the credential store, which command asks.
 */

import { CliFailure } from "./cli-errors.js";
import type { CliInput } from "./cli-io.js";

export interface SecretPrompt {
  /** Shown on a terminal, e.g. `Secret for os-credential-store:pair/hf (typing is hidden): `. */
  readonly prompt: string;
  /** Where the prompt goes (stderr). */
  readonly write: (text: string) => void;
  /** The longest secret accepted, UTF-8 bytes. */
  readonly maxBytes: number;
}

const CTRL_C = "\u0003";
const CTRL_D = "\u0004";
const ESC = "\u001b";

function tooLong(maxBytes: number): CliFailure {
  return new CliFailure(`the secret is longer than ${maxBytes} bytes; nothing was stored`);
}

/** Everything piped in, as UTF-8, refusing more than `maxBytes` (plus room for a line ending). */
async function readPiped(input: CliInput, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of input) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk);
    size += bytes.length;
    if (size > maxBytes + 2) throw tooLong(maxBytes);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** One line typed at a prompt, with echo off. */
function readHidden(input: CliInput, options: SecretPrompt): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const finish = (error?: CliFailure) => {
      input.removeListener("data", onData);
      input.removeListener("end", onEnd);
      input.setRawMode?.(false);
      input.pause();
      options.write("\n");
      if (error === undefined) resolve(text);
      else reject(error);
    };
    const onEnd = () => finish();
    const onData = (chunk: string | Buffer) => {
      const keys = typeof chunk === "string" ? chunk : chunk.toString("utf8");
      if (keys.startsWith(ESC)) return; // a cursor or function key: one escape sequence per chunk
      for (const key of keys) {
        if (key === "\r" || key === "\n" || key === CTRL_D) return finish();
        if (key === CTRL_C) return finish(new CliFailure("cancelled: nothing was stored"));
        if (key === "\u007f" || key === "\b") text = [...text].slice(0, -1).join("");
        else if (key >= " ") text += key;
        if (Buffer.byteLength(text, "utf8") > options.maxBytes) return finish(tooLong(options.maxBytes));
      }
    };
    options.write(options.prompt);
    input.setEncoding("utf8");
    input.setRawMode?.(true);
    input.on("data", onData);
    input.once("end", onEnd);
    input.resume();
  });
}

/** The secret as typed or piped, with the rule applied. @throws CliFailure for an empty or multi-line one */
export async function readSecret(input: CliInput, options: SecretPrompt): Promise<string> {
  const raw =
    input.isTTY === true ? await readHidden(input, options) : await readPiped(input, options.maxBytes);
  const secret = raw.endsWith("\r\n") ? raw.slice(0, -2) : raw.endsWith("\n") ? raw.slice(0, -1) : raw;
  if (secret.length === 0)
    throw new CliFailure(
      input.isTTY === true
        ? "empty secret: nothing was stored"
        : 'empty secret on stdin: nothing was stored — pipe the secret in, e.g. printf %s "$TOKEN" | pair credential set NAME',
    );
  if (/[\r\n]/.test(secret))
    throw new CliFailure(
      "the secret holds a line break (only one trailing newline is dropped); tokens are one line — " +
        "nothing was stored",
    );
  if (Buffer.byteLength(secret, "utf8") > options.maxBytes) throw tooLong(options.maxBytes);
  return secret;
}
