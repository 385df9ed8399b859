/**
 * The pod state machine of Runpod's REST v2, as one literal table: the statuses, which actions
 * each status allows (published in the pod's `actions` field; anything else is 409), where each
 * action leads, and which statuses hold GPUs and bill compute. Timed transitions (provisioning
 * done, container up, container crashed, terminated pod purged) are the events the control plane
 * schedules. Pure: no clock, no I/O.
 * Must not know: HTTP, prices, engines.
 */

export type PodStatus = "PROVISIONING" | "STARTING" | "RUNNING" | "EXITED" | "ERROR" | "TERMINATED";
export type PodAction = "start" | "stop" | "restart" | "terminate";

export const POD_STATUSES: readonly PodStatus[] = [
  "PROVISIONING",
  "STARTING",
  "RUNNING",
  "EXITED",
  "ERROR",
  "TERMINATED",
];
export const POD_ACTIONS: readonly PodAction[] = ["start", "stop", "restart", "terminate"];

/**
 * v2 spec, podAction: RUNNING allows stop/restart/terminate; EXITED and ERROR allow
 * start/terminate; PROVISIONING and STARTING allow stop/terminate. TERMINATED allows nothing
 * (the emulator answers 404 there: the pod is deleted, it only lingers in listings).
 */
export const ALLOWED_ACTIONS: Readonly<Record<PodStatus, readonly PodAction[]>> = {
  PROVISIONING: ["stop", "terminate"],
  STARTING: ["stop", "terminate"],
  RUNNING: ["stop", "restart", "terminate"],
  EXITED: ["start", "terminate"],
  ERROR: ["start", "terminate"],
  TERMINATED: [],
};

/** Where an allowed action leads. `start` skips PROVISIONING: the pod resumes on its own host. */
export function actionTarget(action: PodAction): PodStatus {
  switch (action) {
    case "start":
    case "restart":
      return "STARTING";
    case "stop":
      return "EXITED";
    case "terminate":
      return "TERMINATED";
  }
}

/** Timed events the control plane schedules on a pod. */
export type PodEvent = "provisioned" | "container-started" | "container-crashed" | "purged";

/** The status each timed event leads to (`container-started` may lead to ERROR instead: see control plane). */
export function eventTarget(event: PodEvent): PodStatus | "gone" {
  switch (event) {
    case "provisioned":
      return "STARTING";
    case "container-started":
      return "RUNNING";
    case "container-crashed":
      return "STARTING";
    case "purged":
      return "gone";
  }
}

/** Statuses in which the pod holds its GPUs and is billed for compute (and `cost` is non-zero). */
export function holdsGpu(status: PodStatus): boolean {
  switch (status) {
    case "PROVISIONING":
    case "STARTING":
    case "RUNNING":
      return true;
    case "EXITED":
    case "ERROR":
    case "TERMINATED":
      return false;
  }
}
