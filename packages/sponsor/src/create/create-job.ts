/**
 * `pair rented create --provider huggingface-job`: a managed Hugging Face Jobs node made at run time.
 * The flavor is checked against Hugging Face's hardware list first (unknown: `invalid_value` naming the
 * flavors). Then, as for an endpoint: the node is opened (its store, token, Job secrets), the ledger
 * issues a ComputeAuthorization for the flavor's price + the exposed-port surcharge (none:
 * `budget_exceeded`, nothing is created), the declaration is durable in SQLite and the node's entry in
 * rented-nodes.json (credential references only) before the job's create is sent. The job runs
 * `vllm serve` with a token-protected exposed port, `timeoutSeconds` = the window, secrets as Job
 * secrets. A lost answer is Uncertain and left to reconciliation, never sent again.
 * Must not know: HTTP routing, the CLI, the credential store's platform.
 */

import type { HfJobFlavor, JobsTransport } from "@pair/huggingface";
import type { HuggingFaceJobNode, RentedConfigReader } from "../config/index.js";
import { createdJobEntry, readJobCreateRequest } from "./create-job-request.js";
import type { JobNodes } from "../hf-job/job-nodes.js";
import type { RentedNodes, RentedNodeView } from "../registry/rented-nodes.js";

/** An answer of the create routes: the value, or the HTTP status, PAIR code and field at fault. */
export type CreateAnswer<T> =
  | { readonly ok: true; readonly value: T }
  | {
      readonly ok: false;
      readonly status: number;
      readonly code: string;
      readonly message: string;
      readonly param?: string;
    };

export interface JobCreateDeps {
  readonly nodeName: string;
  /** Reads one entry by the config file's rules (the daemon's `readRentedNodeValue`). */
  readonly readConfig: RentedConfigReader;
  readonly rented: RentedNodes;
  readonly jobs: JobNodes;
  /** The token `credential` names, as the default when the request names none. */
  readonly defaultCredential: string;
  /** Run `fn` with a Jobs API client on the referenced token; errors as PAIR codes. */
  readonly withJobs: <T>(ref: string, fn: (hf: JobsTransport) => Promise<T>) => Promise<CreateAnswer<T>>;
  readonly log?: (line: string) => void;
}

function fail(status: number, code: string, message: string, param?: string): CreateAnswer<never> {
  return { ok: false, status, code, message, ...(param === undefined ? {} : { param }) };
}

function describeFlavor(f: HfJobFlavor): string {
  return `${f.name} ($${(f.usdPerMinute * 60).toFixed(2)}/h)`;
}

/** Create a managed job node (see the header); its view (state `starting`), or why not. */
export async function createJobNode(
  d: JobCreateDeps,
  body: Record<string, unknown>,
): Promise<CreateAnswer<RentedNodeView>> {
  const read = readJobCreateRequest(body);
  if (!read.ok) return fail(400, read.code, read.message, read.param);
  const request = read.request;
  const name = request.name;
  if (d.rented.names().includes(name))
    return fail(409, "duplicate_name", `a rented node named ${name} exists already (pair nodes lists them)`);
  const credential = request.credential ?? d.defaultCredential;
  const looked = await d.withJobs(credential, async (hf) => ({
    namespace: (await hf.whoami()).name,
    flavors: await hf.hardware(),
  }));
  if (!looked.ok) return looked;
  const { namespace, flavors } = looked.value;
  const flavor = flavors.find((f) => f.name === request.flavor);
  if (flavor === undefined)
    return fail(
      400,
      "invalid_value",
      `flavor: "${request.flavor}" is not a Hugging Face Jobs flavor; the flavors are ` +
        `${flavors.map(describeFlavor).join(", ") || "(none listed)"}`,
      "flavor",
    );
  const entry = createdJobEntry(request, credential);
  const config = d.readConfig(entry, d.nodeName);
  if (!config.ok)
    return fail(
      400,
      "invalid_value",
      config.problems.map((p) => `${p.path}: ${p.message}`).join("; "),
      config.problems[0]?.path,
    );
  const node = await d.jobs.add(config.node as HuggingFaceJobNode);
  if (node === undefined) {
    const why = d.jobs.problem(name) ?? "its token could not be read";
    d.jobs.forget(name);
    return fail(503, "credential_unavailable", `rented node ${name}: ${why}`);
  }
  const declared = await node.declareRun();
  if (!declared.ok) {
    d.jobs.forget(name);
    return fail(
      declared.error.code === "budget_exceeded" ? 429 : 503,
      declared.error.code,
      declared.error.message,
    );
  }
  // Durable before anything is sent: the declaration (SQLite) and the node (rented-nodes.json).
  const attached = await d.rented.attach(entry, { probe: false });
  if (!attached.ok) {
    node.controller.cancel(declared.id);
    d.jobs.forget(name);
    return fail(409, attached.code, attached.message);
  }
  d.log?.(
    `rented node ${name}: running ${request.repo} as a Hugging Face Job on ${namespace} ` +
      `(${describeFlavor(flavor)} + the exposed port, window ${request.windowMin} min)`,
  );
  const ran = await node.run(declared.id);
  await node.tick();
  const view = await d.rented.probeNode(name);
  if (!ran.ok) return fail(502, ran.error.code, ran.error.message);
  if (view === undefined) return fail(500, "upstream_error", `rented node ${name} vanished`);
  return { ok: true, value: view };
}
