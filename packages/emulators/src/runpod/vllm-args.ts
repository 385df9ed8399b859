/**
 * What the emulated container makes of a pod's `args` string and environment when its image is a
 * vLLM server: the served model names, the port, and the API keys it enforces (reference §8.1:
 * `--api-key` wins over `VLLM_API_KEY`; neither means no auth). Args are split on whitespace;
 * quoting is not emulated.
 * Must not know: HTTP, pods, secrets (it receives the already expanded environment).
 */

export interface VllmSettings {
  readonly servedModelNames: readonly string[];
  readonly port: number;
  readonly apiKeys: readonly string[];
}

/** The values after `flag` up to the next `-…` token (`--flag=v` also accepted). */
function flagValues(tokens: readonly string[], flag: string): string[] | undefined {
  let values: string[] | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] ?? "";
    if (token.startsWith(`${flag}=`)) {
      values = [token.slice(flag.length + 1)];
      continue;
    }
    if (token !== flag) continue;
    values = [];
    for (let j = i + 1; j < tokens.length && !(tokens[j] ?? "").startsWith("-"); j++)
      values.push(tokens[j] ?? "");
  }
  return values;
}

export function readVllmSettings(
  args: string,
  env: Readonly<Record<string, string>>,
  fallbackModel: string,
): VllmSettings {
  const tokens = args.split(/\s+/).filter((token) => token !== "");
  // `vllm serve <model>` or `--model <model>`; the served names default to the model path.
  const serveAt = tokens.indexOf("serve");
  const positional = serveAt >= 0 ? tokens[serveAt + 1] : undefined;
  const model =
    flagValues(tokens, "--model")?.[0] ??
    (positional !== undefined && !positional.startsWith("-") ? positional : undefined) ??
    fallbackModel;
  const served = flagValues(tokens, "--served-model-name")?.filter((name) => name !== "");
  const portText = flagValues(tokens, "--port")?.[0];
  const port = portText !== undefined && /^\d+$/.test(portText) ? Number(portText) : 8000;
  const flagKeys = flagValues(tokens, "--api-key")?.filter((key) => key !== "");
  const envKey = env["VLLM_API_KEY"];
  const apiKeys = flagKeys && flagKeys.length > 0 ? flagKeys : envKey ? [envKey] : [];
  return { servedModelNames: served && served.length > 0 ? served : [model], port, apiKeys };
}
