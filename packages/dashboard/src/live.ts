/**
 * Live updates: one `EventSource` on `/pair/v1/events` (same origin, the session cookie goes along).
 * Each `change` event names topics (`nodes`, `jobs`, `rented`); the hook counts them, so a view that
 * lists a topic's count among its poll's deps asks again at once. While the stream is up the views
 * poll slowly (a safety net); when it drops (the browser retries by itself) they poll every 1.5 s.
 * Must not know: what a topic's view shows.
 */

import { useEffect, useState } from "preact/hooks";
import { POLL_INTERVAL_MS } from "./use-poll.js";

export type Topic = "nodes" | "jobs" | "rented";

export interface Live {
  /** The stream is open. */
  readonly connected: boolean;
  /** Change events seen per topic. */
  readonly seen: Readonly<Record<Topic, number>>;
}

/** The poll interval while events arrive: they carry the news; the poll only repairs a missed one. */
export const LIVE_POLL_INTERVAL_MS = 10_000;

export function pollInterval(live: Live, fallbackMs = POLL_INTERVAL_MS): number {
  return live.connected ? LIVE_POLL_INTERVAL_MS : fallbackMs;
}

const NONE: Live = { connected: false, seen: { nodes: 0, jobs: 0, rented: 0 } };

export function useLiveEvents(): Live {
  const [live, setLive] = useState<Live>(NONE);
  useEffect(() => {
    if (typeof EventSource === "undefined") return;
    const source = new EventSource("/pair/v1/events");
    source.addEventListener("ready", () => setLive((l) => ({ ...l, connected: true })));
    source.addEventListener("error", () => setLive((l) => ({ ...l, connected: false })));
    source.addEventListener("change", (event) => {
      let topics: unknown;
      try {
        topics = (JSON.parse((event as MessageEvent<string>).data) as { topics?: unknown }).topics;
      } catch {
        return;
      }
      if (!Array.isArray(topics)) return;
      setLive((l) => {
        const seen = { ...l.seen };
        for (const t of topics as unknown[])
          if (t === "nodes" || t === "jobs" || t === "rented") seen[t] += 1;
        return { connected: true, seen };
      });
    });
    return () => source.close();
  }, []);
  return live;
}
