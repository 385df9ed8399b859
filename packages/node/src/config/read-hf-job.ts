/**
 * The `job:` section of a `provider: huggingface-job` rented node: the Job PAIR runs on demand for a
 * batch window (`repo`, `flavor`, `window_min`, optional `image`, `secrets` as credential references
 * by environment name). Each value is checked here with its key's path, by the rules of
 * validateJobNodeSettings' limits. Secrets are never values in the file: each is a reference the
 * sponsor reads from the OS credential store and passes as a Job secret.
 * Must not know: YAML, the Jobs API, the credential store, the ledger.
 */

import type { CredentialRef, HfJobSettings } from "./config-types.js";
import { MS_PER_MINUTE } from "./defaults.js";
import { Section } from "./field-reader.js";

export const HF_JOB_KEYS = ["repo", "flavor", "window_min", "image", "secrets"] as const;

const REPO = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;
const FLAVOR = /^[a-z0-9][a-z0-9-]*$/;
const IMAGE = /^\S+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** HF's own limits on a job's timeout, as the adapter accepts them (MIN_WINDOW_S, MAX_WINDOW_S). */
const MIN_WINDOW_MIN = 1;
const MAX_WINDOW_MIN = 24 * 60;
const MAX_SECRETS = 16;

function pattern(section: Section, key: string, re: RegExp, what: string): string | undefined {
  const value = section.string(key, { required: key !== "image" });
  if (value !== undefined && !re.test(value)) {
    section.report(key, "invalid_value", what);
    return undefined;
  }
  return value;
}

function readSecrets(job: Section): Record<string, CredentialRef> | undefined {
  const raw = job.raw("secrets");
  if (raw === undefined) return {};
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    job.report(
      "secrets",
      "invalid_type",
      "expected a mapping NAME: os-credential-store:SERVICE/ACCOUNT (e.g. HF_TOKEN for gated models)",
    );
    return undefined;
  }
  const names = Object.keys(raw);
  if (names.length > MAX_SECRETS) {
    job.report("secrets", "invalid_value", `at most ${MAX_SECRETS} secrets`);
    return undefined;
  }
  const section = Section.open(job.problems, raw, job.at("secrets"), names);
  const before = job.problems.count;
  const secrets: Record<string, CredentialRef> = {};
  for (const name of names) {
    if (!ENV_NAME.test(name)) {
      section.report(name, "invalid_value", "a secret's name is an environment variable name (A-Z, 0-9, _)");
      continue;
    }
    const ref = section.credential(name, { required: true });
    if (ref !== undefined) secrets[name] = ref;
  }
  return job.problems.count > before ? undefined : secrets;
}

/** The `job:` section; undefined (every problem reported) when it cannot be used. */
export function readHfJob(entry: Section): HfJobSettings | undefined {
  const job = entry.section("job", HF_JOB_KEYS);
  const before = job.problems.count;
  const repo = pattern(job, "repo", REPO, "a Hugging Face repository id owner/name, e.g. Qwen/Qwen3-0.6B");
  const flavor = pattern(job, "flavor", FLAVOR, "a Jobs flavor, e.g. l4x1 or a10g-small");
  const image = pattern(
    job,
    "image",
    IMAGE,
    "an image reference without spaces, e.g. vllm/vllm-openai:v0.23.0",
  );
  if (!job.has("window_min")) job.missing("window_min", " (the batch window in minutes, at most 1440)");
  const windowMin = job.integer("window_min", { min: MIN_WINDOW_MIN, max: MAX_WINDOW_MIN }, 0);
  const secrets = readSecrets(job);
  if (job.problems.count > before || repo === undefined || flavor === undefined || secrets === undefined)
    return undefined;
  return {
    repo,
    flavor,
    windowMs: windowMin * MS_PER_MINUTE,
    ...(image === undefined ? {} : { image }),
    secrets,
  };
}
