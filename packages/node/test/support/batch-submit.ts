// A chat batch submitted as a script does it: `lines` questions for `model` uploaded as a JSONL file
// through /v1/files (no Origin: not a web page), then created on /v1/batches; resolves to its id.

/** `lines` chat requests for `model` as a batch's JSONL text, `customId(i)` each, `question i` asked. */
export function chatLines(
  model: string,
  lines: number,
  customId: (i: number) => string = (i) => `q${i}`,
  maxTokens?: number,
): string {
  return Array.from({ length: lines }, (_, i) =>
    JSON.stringify({
      custom_id: customId(i),
      method: "POST",
      url: "/v1/chat/completions",
      body: {
        model,
        messages: [{ role: "user", content: `question ${i}` }],
        ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
      },
    }),
  ).join("\n");
}

export async function submitChatBatch(
  baseUrl: string,
  model: string,
  lines: number,
  customId: (i: number) => string = (i) => `q${i}`,
  maxTokens?: number,
): Promise<string> {
  const text = chatLines(model, lines, customId, maxTokens);
  const form = new FormData();
  form.set("purpose", "batch");
  form.set("file", new Blob([text]), "in.jsonl");
  const file = (await (await fetch(`${baseUrl}/v1/files`, { method: "POST", body: form })).json()) as {
    id: string;
  };
  const created = await fetch(`${baseUrl}/v1/batches`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    }),
  });
  if (created.status !== 200)
    throw new Error(`creating the batch: HTTP ${created.status} ${await created.text()}`);
  return ((await created.json()) as { id: string }).id;
}
