/**
 * A Preact hook that asks the node again and again: `load` at once, then every `intervalMs`
 * (≤ 2 s keeps the views live), keeping the last good answer when one fails. `reload()` asks now
 * (after a change the user made).
 * Must not know: what is loaded.
 */

import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { nodeNow } from "./api.js";

/** How often the views refresh. */
export const POLL_INTERVAL_MS = 1_500;

export interface Polled<T> {
  readonly data: T | undefined;
  readonly error: Error | undefined;
  /** When the last good answer came (epoch ms, on the node's clock). */
  readonly at: number | undefined;
  reload(): void;
}

export function usePoll<T>(load: () => Promise<T>, deps: readonly unknown[], intervalMs = POLL_INTERVAL_MS) {
  const [state, setState] = useState<{ data?: T; error?: Error; at?: number }>({});
  const loadRef = useRef(load);
  loadRef.current = load;
  const tick = useRef<() => void>(() => undefined);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // The next ask is scheduled when this one ends: a slow node never gets two at once.
    let generation = 0;
    const run = () => {
      if (timer !== undefined) clearTimeout(timer);
      const mine = ++generation;
      loadRef
        .current()
        .then(
          (data) => {
            if (!stopped && mine === generation) setState({ data, at: nodeNow() });
          },
          (error: unknown) => {
            if (!stopped && mine === generation)
              setState((s) => ({ ...s, error: error instanceof Error ? error : new Error(String(error)) }));
          },
        )
        .finally(() => {
          if (!stopped && mine === generation) timer = setTimeout(run, intervalMs);
        });
    };
    tick.current = run;
    run();
    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    };
    // `deps`: what `load` reads, as the caller lists it.
  }, [intervalMs, ...deps]);

  const reload = useCallback(() => tick.current(), []);
  return { data: state.data, error: state.error, at: state.at, reload } satisfies Polled<T>;
}
