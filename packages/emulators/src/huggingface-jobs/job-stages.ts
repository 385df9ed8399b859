/**
 * Hugging Face Jobs stages (reference §5.4 [C]): SCHEDULING → RUNNING → one of COMPLETED, ERROR,
 * CANCELED, DELETED, as one literal transition table; which stages are live and which are billed.
 * Billing follows the docs ([D]: "per minute, only while starting or running"): RUNNING only, so
 * time spent SCHEDULING is free. The stage a timeout reaches is undocumented ([?]); the emulator
 * uses ERROR with the message "Job timed out after N seconds".
 * Must not know: HTTP, records, prices.
 */

export const JOB_STAGES = ["SCHEDULING", "RUNNING", "COMPLETED", "ERROR", "CANCELED", "DELETED"] as const;
export type JobStage = (typeof JOB_STAGES)[number];

export const JOB_TRANSITIONS: Readonly<Record<JobStage, readonly JobStage[]>> = {
  SCHEDULING: ["RUNNING", "ERROR", "CANCELED", "DELETED"],
  RUNNING: ["COMPLETED", "ERROR", "CANCELED", "DELETED"],
  COMPLETED: ["DELETED"],
  ERROR: ["DELETED"],
  CANCELED: ["DELETED"],
  DELETED: [],
};

export function isLiveStage(stage: JobStage): boolean {
  return stage === "SCHEDULING" || stage === "RUNNING";
}

export function isBilledStage(stage: JobStage): boolean {
  return stage === "RUNNING";
}

export function isJobStage(value: string): value is JobStage {
  return (JOB_STAGES as readonly string[]).includes(value);
}
