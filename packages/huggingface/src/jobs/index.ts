/**
 * The Hugging Face Jobs adapter: the JobsTransport port and its HTTPS implementation, the provider
 * behind the hosting contract, its capabilities, the create spec (vllm serve, window = timeout,
 * Job secrets), PAIR's marks as labels, the report/treatment mapping and the exposed-port probe.
 * Must not know: PAIR's node (config, CLI, routing).
 */

export { EXPOSED_PORT_USD_PER_HOUR, HF_JOB_CAPABILITIES, HF_JOB_PROVIDER } from "./capabilities.js";
export {
  DEFAULT_JOB_IMAGE,
  DEFAULT_JOB_PORT,
  JOB_SETTINGS,
  MAX_WINDOW_S,
  MIN_WINDOW_S,
  toJobSpec,
} from "./job-create-spec.js";
export { LABEL as JOB_LABELS, fitsLabel, readJobMarks } from "./job-marks.js";
export { jobCostMicroUsd, jobRateMicroUsdPerHour } from "./job-cost.js";
export { httpsPortProbe, type PortProbe, type PortProbeOptions } from "./job-port-probe.js";
export { jobKey, jobTreatment, toJobReport, type JobNodeTreatment } from "./job-report.js";
export { HttpsJobsTransport, type HttpsJobsTransportOptions } from "./https-jobs-transport.js";
export { HuggingFaceJobsProvider, type HuggingFaceJobsProviderOptions } from "./jobs-provider.js";
export type * from "./jobs-model.js";
export { HF_JOB_STAGES } from "./jobs-model.js";
export type { JobsListFilter, JobsTransport } from "./jobs-transport.js";
export { nextLink, readHardware, readJob, readJobList, toJobCreateBody } from "./jobs-wire.js";
