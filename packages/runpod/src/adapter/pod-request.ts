/**
 * The `POST /v2/pods` body for one model on one GPU type: image, the vLLM args (model, served name,
 * host and port set here, every other argument from the RunpodModel), the identity env, and the
 * vLLM API key as a Runpod secret reference — the only form the key ever takes in this process.
 * Must not know: HTTP, which GPU type comes next, the key's value.
 */

import type { CreateRequest } from "@pair/provision";
import type { CreatePodRequest } from "../wire.js";
import { identityEnv } from "./pod-identity.js";
import type { RunpodModel } from "./runpod-model.js";

/** `{{ RUNPOD_SECRET_<name> }}`: Runpod substitutes the value inside the container at start. */
export function secretReference(secretName: string): string {
  return `{{ RUNPOD_SECRET_${secretName} }}`;
}

export function vllmArgs(model: RunpodModel, servedModel: string): string {
  return [
    "--model",
    model.vllmModel,
    "--served-model-name",
    servedModel,
    "--host",
    "0.0.0.0",
    "--port",
    String(model.port),
    ...model.vllmArgs,
  ].join(" ");
}

export function podRequest(request: CreateRequest, model: RunpodModel, gpuType: string): CreatePodRequest {
  const { spec } = request;
  const mounts =
    model.networkVolumeId !== undefined
      ? { network: [{ volumeId: model.networkVolumeId, path: "/workspace" }] }
      : model.volumeGb > 0
        ? { persistent: { size: model.volumeGb, path: "/workspace" } }
        : undefined;
  return {
    name: spec.name,
    image: model.image,
    gpu: { id: gpuType, count: model.gpuCount },
    args: vllmArgs(model, spec.model),
    disk: model.containerDiskGb,
    ports: [`${model.port}/http`],
    env: {
      ...identityEnv({
        ownerTag: request.ownerTag,
        epoch: request.epoch,
        requestId: request.requestId,
        servedModel: spec.model,
      }),
      VLLM_API_KEY: secretReference(model.apiKeySecret),
    },
    cloud: model.cloudType,
    ...(mounts === undefined ? {} : { mounts }),
    ...(model.dataCenterIds.length > 0 ? { dataCenterIds: model.dataCenterIds } : {}),
  };
}
