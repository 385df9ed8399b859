/**
 * An in-memory `HostingStore`. It keeps the committed state as JSON text, so what it hands back is
 * exactly what a durable store would read: no shared objects, nothing that does not serialize.
 * Must not know: anything beyond the store port.
 */

import type { HostingStore } from "./controller.js";
import { EMPTY_STATE, type HostingState } from "./state.js";

export class MemoryHostingStore implements HostingStore {
  #json = JSON.stringify(EMPTY_STATE);
  #version = 0;

  load(): HostingState {
    return JSON.parse(this.#json) as HostingState;
  }

  commit(next: HostingState, expectedVersion: number): "committed" | "conflict" {
    if (this.#version !== expectedVersion || next.version <= expectedVersion) return "conflict";
    this.#json = JSON.stringify(next);
    this.#version = next.version;
    return "committed";
  }
}
