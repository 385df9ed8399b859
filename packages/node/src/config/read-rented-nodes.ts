/**
 * The `rented_nodes:` list. Each provider is reached one way: a Hugging Face endpoint by
 * `endpoint: namespace/name` (its URL comes from the Endpoints API), a Runpod pod by `endpoint: POD_ID`
 * (without base_url, the sponsor uses `providers.runpod.proxy_url`) or, created on demand, by its `pod:` settings (read-runpod-pod.ts),
 * everything else by `base_url`. Credentials are references;
 * durations and budgets are converted to milliseconds and micro-dollars. Names are unique and differ
 * from this node's own name.
 * Must not know: YAML, provider APIs, the ledger, the credential store.
 */

import {
  MANAGEABLE_PROVIDERS,
  RENTED_PROVIDERS,
  ROUTING_USES,
  type BaseUrlNode,
  type CredentialRef,
  type HuggingFaceEndpointNode,
  type HuggingFaceJobNode,
  type RentedBudget,
  type RentedLifecycle,
  type RentedNodeConfig,
  type RentedProvider,
  type RunpodNode,
  type RunpodPodNode,
} from "./config-types.js";
import type { RentedNodeProblem } from "@pair/sponsor";
import { LIMITS, MS_PER_MINUTE, MS_PER_SECOND, RENTED_DEFAULTS } from "./defaults.js";
import { Section } from "./field-reader.js";
import { formatPath, ProblemList } from "./problems.js";
import { readContextTokens } from "./read-context-tokens.js";
import { readHfJob } from "./read-hf-job.js";
import { readRunpodPod, readVllmApiKey } from "./read-runpod-pod.js";

export const RENTED_NODE_KEYS = [
  "name",
  "provider",
  "endpoint",
  "base_url",
  "credential",
  "share_with_cluster",
  "models",
  "routing",
  "timeouts",
  "lifecycle",
  "budget",
  "pod",
  "vllm_api_key",
  "job",
  "context_tokens",
  "max_concurrent",
] as const;
const LIFECYCLE_KEYS = [
  "managed",
  "wake_on_request",
  "idle_pause_min",
  "pause_on_sponsor_exit",
  "exit_timeout_s",
  "startup_deadline_min",
] as const;

const SECONDS = { ms: MS_PER_SECOND, label: "seconds" } as const;
const MINUTES = { ms: MS_PER_MINUTE, label: "minutes" } as const;
const ENDPOINT_PART = /^(?!\.{1,2}$)[^\s/?#%\\]{1,96}$/;
const POD_ID = /^[a-z0-9]{1,64}$/;

/** `namespace/name`; undefined (reported) when malformed. */
function readEndpointRef(entry: Section): { namespace: string; name: string } | undefined {
  const text = entry.string("endpoint", { required: true });
  if (text === undefined) return undefined;
  const [namespace, name, ...rest] = text.split("/");
  if (namespace === undefined || name === undefined || rest.length > 0) return badEndpoint(entry);
  if (!ENDPOINT_PART.test(namespace) || !ENDPOINT_PART.test(name)) return badEndpoint(entry);
  return { namespace, name };
}

function badEndpoint(entry: Section): undefined {
  entry.report("endpoint", "invalid_value", "expected namespace/endpoint-name (the Hugging Face endpoint)");
  return undefined;
}

function refuseKey(entry: Section, key: string, provider: RentedProvider, instead: string): void {
  if (entry.has(key)) entry.report(key, "invalid_value", `a ${provider} node takes no ${key}; ${instead}`);
}

function refusePodKeys(entry: Section, provider: RentedProvider): void {
  for (const key of ["pod", "vllm_api_key"])
    refuseKey(entry, key, provider, "only a provider: runpod node takes it");
}

/** What locates a node, by provider. */
type Target =
  | Pick<HuggingFaceEndpointNode, "provider" | "endpoint">
  | Pick<RunpodNode, "provider" | "podId" | "baseUrl">
  | Pick<RunpodPodNode, "provider" | "pod" | "vllmApiKey">
  | Pick<HuggingFaceJobNode, "provider" | "job">
  | Pick<BaseUrlNode, "provider" | "baseUrl">;

/** Reads what locates the node; undefined (reported) when it cannot be located. */
function readTarget(entry: Section, provider: RentedProvider): Target | undefined {
  switch (provider) {
    case "huggingface-endpoint": {
      refuseKey(entry, "base_url", provider, "its URL is looked up through the Endpoints API");
      refusePodKeys(entry, provider);
      const endpoint = readEndpointRef(entry);
      return endpoint === undefined ? undefined : { provider, endpoint };
    }
    case "runpod": {
      if (entry.has("pod")) return readManagedPod(entry);
      const podId = entry.string("endpoint", { required: true });
      const baseUrl = entry.url("base_url");
      if (podId !== undefined && !POD_ID.test(podId)) {
        entry.report(
          "endpoint",
          "invalid_value",
          "expected the Runpod pod id (lowercase letters and digits)",
        );
        return undefined;
      }
      readVllmApiKey(entry, false);
      if (podId === undefined) return undefined;
      // Without base_url the sponsor fills in providers.runpod.proxy_url (the one template; rented-probe.ts).
      if (entry.has("base_url") && baseUrl === undefined) return undefined;
      return { provider, podId, ...(baseUrl === undefined ? {} : { baseUrl }) };
    }
    case "huggingface-job":
    case "huggingface-providers":
    case "openai-compatible": {
      // A Jobs node with job: is run by PAIR; without, it is reached by its base_url, as before.
      if (provider === "huggingface-job" && entry.has("job")) return readManagedJob(entry);
      refuseKey(entry, "endpoint", provider, "give its base_url");
      refusePodKeys(entry, provider);
      const required = provider !== "huggingface-providers";
      const baseUrl = entry.url("base_url", { required });
      if (baseUrl === undefined && (required || entry.has("base_url"))) return undefined;
      return { provider, baseUrl: baseUrl ?? RENTED_DEFAULTS.huggingface_providers_base_url };
    }
  }
}

/** `pod:` instead of `endpoint:`: PAIR creates the pod on demand (read-runpod-pod.ts). */
function readManagedPod(entry: Section): Target | undefined {
  refuseKey(entry, "endpoint", "runpod", "with a pod: section PAIR creates the pod (no pod id)");
  refuseKey(entry, "base_url", "runpod", "a created pod is reached through its Runpod proxy URL");
  const pod = readRunpodPod(entry);
  const vllmApiKey = readVllmApiKey(entry, true);
  return pod === undefined || vllmApiKey === undefined ? undefined : { provider: "runpod", pod, vllmApiKey };
}

/** `job:` instead of `base_url`: PAIR runs the Job on demand (read-hf-job.ts). */
function readManagedJob(entry: Section): Target | undefined {
  refuseKey(entry, "endpoint", "huggingface-job", "with a job: section PAIR runs the Job");
  refuseKey(entry, "base_url", "huggingface-job", "a Job is reached through its exposed port's URL");
  refusePodKeys(entry, "huggingface-job");
  const job = readHfJob(entry);
  return job === undefined ? undefined : { provider: "huggingface-job", job };
}

/** PAIR can start, pause and stop this node (and so bill for it). */
function manageable(entry: Section, provider: RentedProvider | undefined): boolean {
  return (
    provider !== undefined &&
    (MANAGEABLE_PROVIDERS.includes(provider) || (provider === "huggingface-job" && entry.has("job")))
  );
}

/**
 * PAIR starts (and so bills) this node: a managed Hugging Face endpoint, a Job it runs (`job:`), a pod
 * it creates (`pod:`). A pod attached by id is only routed to, whatever its `managed` says.
 */
function billedByPair(target: Target, lifecycle: RentedLifecycle): boolean {
  if ("job" in target || "pod" in target) return true;
  return target.provider === "huggingface-endpoint" && lifecycle.managed;
}

function readLifecycle(entry: Section, provider: RentedProvider | undefined): RentedLifecycle {
  const lifecycle = entry.section("lifecycle", LIFECYCLE_KEYS);
  const canManage = manageable(entry, provider);
  const managed = lifecycle.boolean("managed", canManage);
  if (managed && provider !== undefined && !canManage) {
    lifecycle.report(
      "managed",
      "invalid_value",
      `PAIR cannot manage a ${provider} node's lifecycle (only ${MANAGEABLE_PROVIDERS.join(", ")}); ` +
        "set managed: false to route to it",
    );
  }
  return {
    managed,
    wakeOnRequest: lifecycle.boolean("wake_on_request", RENTED_DEFAULTS.wake_on_request),
    idlePauseMs: lifecycle.durationMs(
      "idle_pause_min",
      MINUTES,
      RENTED_DEFAULTS.idle_pause_min * MS_PER_MINUTE,
    ),
    pauseOnSponsorExit: lifecycle.boolean("pause_on_sponsor_exit", RENTED_DEFAULTS.pause_on_sponsor_exit),
    exitTimeoutMs: lifecycle.durationMs(
      "exit_timeout_s",
      SECONDS,
      RENTED_DEFAULTS.exit_timeout_s * MS_PER_SECOND,
    ),
    startupDeadlineMs: lifecycle.durationMs(
      "startup_deadline_min",
      MINUTES,
      RENTED_DEFAULTS.startup_deadline_min * MS_PER_MINUTE,
    ),
  };
}

const BUDGET_KEYS = ["usd_per_day", "usd_per_month", "unlimited"] as const;

/**
 * A node PAIR starts and bills (`billedByPair`) must say what it may spend: a cap, or `unlimited:
 * true` written down. A missing budget used to mean no cap, and any request could keep a GPU billed;
 * a node PAIR only routes to bills nothing through PAIR and needs none.
 */
function readBudget(entry: Section, managed: boolean): RentedBudget {
  const budget = entry.section("budget", BUDGET_KEYS);
  const perDay = budget.microUsd("usd_per_day");
  const perMonth = budget.microUsd("usd_per_month");
  const unlimited = budget.boolean("unlimited", false);
  const capped = budget.has("usd_per_day") || budget.has("usd_per_month");
  if (unlimited && capped)
    budget.report(
      "unlimited",
      "invalid_value",
      "unlimited: true contradicts usd_per_day / usd_per_month: keep the cap or the unlimited, not both",
    );
  else if (managed && !unlimited && !capped)
    entry.report(
      "budget",
      "budget_required",
      "PAIR starts and bills this node, so it needs a cap: budget: { usd_per_day: N } " +
        "(and/or usd_per_month: N); to run it with no cap, write budget: { unlimited: true }",
    );
  return {
    ...(perDay === undefined ? {} : { budgetMicroUsdPerDay: perDay }),
    ...(perMonth === undefined ? {} : { budgetMicroUsdPerMonth: perMonth }),
    ...(unlimited && !capped ? { unlimited: true as const } : {}),
  };
}

function readCredential(entry: Section, provider: RentedProvider | undefined): CredentialRef | undefined {
  // Only a generic OpenAI-compatible endpoint may answer without a token (and is warned about then).
  const required = provider !== undefined && provider !== "openai-compatible";
  return entry.credential("credential", { required });
}

function readRentedNode(entry: Section): { name: string | undefined; node: RentedNodeConfig | undefined } {
  const name = entry.name("name", { required: true });
  const provider = entry.oneOf("provider", RENTED_PROVIDERS);
  if (!entry.has("provider")) entry.missing("provider", ` (${RENTED_PROVIDERS.join(" | ")})`);
  if (provider !== undefined && provider !== "huggingface-job")
    refuseKey(entry, "job", provider, "only a provider: huggingface-job node takes it");
  const target = provider === undefined ? undefined : readTarget(entry, provider);
  const credential = readCredential(entry, provider);
  const routing = entry.section("routing", ["use"]);
  const isJob = target !== undefined && "job" in target;
  const common = {
    name: name ?? "",
    ...(credential === undefined ? {} : { credential }),
    shareWithCluster: entry.boolean("share_with_cluster", RENTED_DEFAULTS.share_with_cluster),
    models: entry.stringList("models", LIMITS.maxModels),
    routing: {
      // A job node is rented for its batch: `prefer` its models during its window unless told otherwise.
      use: routing.oneOf("use", ROUTING_USES, isJob ? "prefer" : RENTED_DEFAULTS.routing_use),
      // A job node's own use (prefer in its window, never outside it) yields to one written down.
      ...(isJob && routing.has("use") ? { explicit: true as const } : {}),
    },
    maxConcurrent: entry.integer(
      "max_concurrent",
      { min: 1, max: LIMITS.maxConcurrent },
      RENTED_DEFAULTS.max_concurrent,
    ),
    timeouts: {
      coldStartMs: entry
        .section("timeouts", ["cold_start_s"])
        .durationMs("cold_start_s", SECONDS, RENTED_DEFAULTS.cold_start_s * MS_PER_SECOND),
    },
    lifecycle: readLifecycle(entry, provider),
  };
  const budget = readBudget(entry, target !== undefined && billedByPair(target, common.lifecycle));
  const contextTokens = readContextTokens(entry);
  if (target !== undefined && "pod" in target && !common.lifecycle.managed)
    entry.report(
      "lifecycle",
      "invalid_value",
      "managed: false cannot go with a pod: section (PAIR creates those pods)",
    );
  if (name === undefined || target === undefined) return { name, node: undefined };
  return {
    name,
    node: { ...target, ...common, budget, ...(contextTokens === undefined ? {} : { contextTokens }) },
  };
}

export function readRentedNodes(problems: ProblemList, top: Section, nodeName: string): RentedNodeConfig[] {
  const nodes: RentedNodeConfig[] = [];
  const seen = new Set<string>();
  top.list("rented_nodes", LIMITS.maxRentedNodes).forEach((value, index) => {
    const entry = Section.open(problems, value, [...top.at("rented_nodes"), index], RENTED_NODE_KEYS);
    const { name, node } = readRentedNode(entry);
    if (name !== undefined && seen.has(name)) {
      entry.report("name", "duplicate_name", "another rented node has the same name");
    } else if (name !== undefined && name === nodeName) {
      entry.report("name", "duplicate_name", "a rented node cannot have this node's own name (node.name)");
    }
    if (name !== undefined) seen.add(name);
    if (node !== undefined) nodes.push(node);
  });
  return nodes;
}

export type { RentedNodeProblem };

/**
 * One rented node given as plain values (`pair rented attach` at run time, the data dir's file),
 * read by exactly the rules of the config file's `rented_nodes:` entries. The sponsor is handed this
 * as its `RentedConfigReader`.
 */
export function readRentedNodeValue(
  value: unknown,
  nodeName: string,
):
  | { readonly ok: true; readonly node: RentedNodeConfig }
  | { readonly ok: false; readonly problems: RentedNodeProblem[] } {
  const problems = new ProblemList();
  const top = Section.open(problems, { rented_nodes: [value] }, [], ["rented_nodes"]);
  const [node] = readRentedNodes(problems, top, nodeName);
  if (problems.count > 0 || node === undefined)
    return {
      ok: false,
      problems: problems.items.map((p) => ({
        path: formatPath(p.segments.slice(2)),
        code: p.code,
        message: p.message,
      })),
    };
  return { ok: true, node };
}
