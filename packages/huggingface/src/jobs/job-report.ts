/**
 * A job as the hosting contract sees it: the key `(huggingface-job, namespace, name, job id)` — the
 * name is the one PAIR recorded for that job id when it has a record, else the `name` label; the job
 * id is the incarnation, so a re-run under the same name is another resource — and a
 * report holding only what HF said (stage verbatim, PAIR's marks read back, the exposed URL). The
 * node treatment: SCHEDULING, and RUNNING before the port answers, are `starting`; RUNNING with the
 * port answering is `eligible`; every terminal stage is `ended` (billing-ended evidence).
 * Must not know: HTTP, what the contract does with a report.
 */

import type { ResourceKey, ResourceReport } from "@pair/provision";
import { HF_JOB_PROVIDER } from "./capabilities.js";
import { LABEL, readJobMarks } from "./job-marks.js";
import type { HfJob } from "./jobs-model.js";

/** `recordedName`: the name PAIR's record holds for this job id (labels may be lost or changed). */
export function jobKey(job: HfJob, recordedName?: string): ResourceKey {
  return {
    provider: HF_JOB_PROVIDER,
    account: job.namespace,
    name: recordedName ?? job.labels[LABEL.name] ?? job.id,
    incarnation: job.id,
  };
}

export type JobNodeTreatment = "starting" | "eligible" | "ended";

/** `portAnswered`: the exposed port answered a probe with our token. */
export function jobTreatment(stage: string, portAnswered: boolean): JobNodeTreatment {
  switch (stage) {
    case "SCHEDULING":
      return "starting";
    case "RUNNING":
    case "UPDATING":
      return portAnswered ? "eligible" : "starting";
    default:
      // COMPLETED, ERROR, CANCELED, DELETED and any stage we do not know: never routed to.
      return "ended";
  }
}

/** `portAnswered` undefined: not probed, so readiness is not reported (only SCHEDULING is known not ready). */
export function toJobReport(job: HfJob, portAnswered?: boolean, recordedName?: string): ResourceReport {
  const marks = readJobMarks(job.labels, job.environment);
  const ready =
    job.stage === "RUNNING"
      ? portAnswered
      : job.stage === "SCHEDULING"
        ? false
        : portAnswered === undefined
          ? undefined
          : false;
  return {
    key: jobKey(job, recordedName),
    status: job.rawStage,
    ...marks,
    ...(ready === undefined ? {} : { ready }),
    ...(job.exposeUrls[0] === undefined ? {} : { address: job.exposeUrls[0] }),
    ...(job.flavor === undefined ? {} : { hardware: job.flavor }),
    createdAtMs: job.createdAtMs,
    ...(job.message === undefined ? {} : { message: job.message }),
    ...(servedModel(job.command) === undefined ? {} : { servedModel: servedModel(job.command) as string }),
  };
}

function servedModel(command: readonly string[]): string | undefined {
  const named = command.indexOf("--served-model-name");
  if (named >= 0) return command[named + 1];
  const serve = command.indexOf("serve");
  return serve >= 0 ? command[serve + 1] : undefined;
}
