/**
 * The Hugging Face Jobs emulator's public surface (it runs inside the Hugging Face emulator's
 * server: `startHuggingFaceEmulator(...).jobs`): options, test views, meter, faults, flavors, stages.
 * Must not know: anything beyond re-exports.
 */

export type { JobView, JobsEmulator, JobsEmulatorOptions, JobsRequestSeen } from "./jobs-service.js";
export type { JobsFaults } from "./jobs-faults.js";
export type { JobStretch, JobsMeter } from "./jobs-meter.js";
export type { JobTimings } from "./jobs-world.js";
export { DEFAULT_FLAVORS, EXPOSED_PORT_USD_PER_HOUR, type JobFlavor } from "./flavors.js";
export { JOB_STAGES, JOB_TRANSITIONS, isBilledStage, isLiveStage, type JobStage } from "./job-stages.js";
export { DEFAULT_TIMEOUT_S } from "./job-spec.js";
