/**
 * What the crash tests' clients send through a `pair serve` child: a request settled as its status,
 * or "cut" when the child died under it; a short chat; and a long stream that calls back at its first
 * bytes (the moment to SIGKILL the sponsor).
 * Must not know: which provider the child sponsors, what a test asserts.
 */

import { fetchChat, postChat } from "../support/chat.js";

/** The answer's status once its body is read, or "cut" when the connection broke first. */
export function statusOrCut(answer: Promise<Response>): Promise<number | "cut"> {
  return answer.then(
    async (res) => {
      await res.arrayBuffer();
      return res.status;
    },
    () => "cut" as const,
  );
}

/** A short, unstreamed chat for `model` (3 tokens). */
export function chat(url: string, model: string): Promise<number | "cut"> {
  return statusOrCut(fetchChat(url, { model, maxTokens: 3 }));
}

/** A long streamed chat (500 tokens); `onFirstBytes` once the first chunk arrived; the text read until it ended or broke. */
export async function streamChat(url: string, model: string, onFirstBytes: () => void): Promise<string> {
  const res = await postChat(url, { model, stream: true, maxTokens: 500 });
  if (res.statusCode !== 200) throw new Error(`stream: status ${res.statusCode}: ${await res.body.text()}`);
  let text = "";
  for await (const chunk of res.body) {
    if (text === "") onFirstBytes();
    text += (chunk as Buffer).toString();
  }
  return text;
}
