/**
 * Runpod secret references in pod env values: `{{ RUNPOD_SECRET_<name> }}` (spaces inside the
 * braces optional; names of letters, digits, `_`, `-`, `.`). The emulator expands a reference only
 * when it is the whole value [I: whether a reference inside a larger string expands is unverified;
 * PAIR must not rely on it], and only in the environment handed to the emulated container. The API
 * always returns the literal reference.
 * Must not know: HTTP, pods, where secrets come from.
 */

const REFERENCE = /^\{\{\s*RUNPOD_SECRET_([A-Za-z0-9_.-]+)\s*\}\}$/;

/** The secret name a value refers to, or undefined when the value is not a whole reference. */
export function secretReference(value: string): string | undefined {
  return REFERENCE.exec(value)?.[1];
}

export interface ExpandedEnv {
  /** The container's environment: references replaced by secret values. Never leaves the process. */
  readonly env: Readonly<Record<string, string>>;
  /** Names referenced but absent from the secret table. */
  readonly missing: readonly string[];
}

export function expandSecrets(
  env: Readonly<Record<string, string>>,
  secrets: ReadonlyMap<string, string>,
): ExpandedEnv {
  const expanded: Record<string, string> = {};
  const missing: string[] = [];
  for (const [key, value] of Object.entries(env)) {
    const name = secretReference(value);
    if (name === undefined) {
      expanded[key] = value;
      continue;
    }
    const secret = secrets.get(name);
    if (secret === undefined) {
      missing.push(name);
      expanded[key] = "";
    } else expanded[key] = secret;
  }
  return { env: expanded, missing };
}
