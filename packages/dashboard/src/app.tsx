/**
 * The dashboard's shell: signs in (the session's node name and CSRF token), shows the navigation,
 * and the view the URL's fragment names, each refreshed by polling (≤ 2 s). When the session has
 * ended it says how to get a new login link.
 * Must not know: how a view lays out its data.
 */

import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, get, session, setPolicy, setShare, signOut } from "./api.js";
import { formatTime } from "./format.js";
import { parseRoute, routeHref, type Route } from "./route.js";
import { usePoll } from "./use-poll.js";
import { HistoryView } from "./views/history-view.js";
import { JobsView } from "./views/jobs-view.js";
import { NodeDetailView } from "./views/node-detail-view.js";
import { NodesView } from "./views/nodes-view.js";
import type { NodeRow, SessionInfo, SponsoredNode, Workload } from "./wire.js";

const SIGNED_OUT =
  "Your dashboard session has ended (signed out, expired, or the node restarted). Run `pair ui` on the " +
  "node's machine and open the new link.";

export function App() {
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash));
  const [me, setMe] = useState<SessionInfo | undefined>();
  const [fatal, setFatal] = useState<string | undefined>();

  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);
  useEffect(() => {
    session().then(setMe, (error: unknown) =>
      setFatal(error instanceof ApiError && error.signedOut ? SIGNED_OUT : String(error)),
    );
  }, []);

  if (fatal !== undefined)
    return (
      <main id="main" class="signed-out">
        <h1>PAIR dashboard</h1>
        <p role="alert">{fatal}</p>
      </main>
    );
  if (me === undefined)
    return (
      <main id="main">
        <p role="status">Signing in…</p>
      </main>
    );
  return (
    <>
      {/* The fragment names the view, so the skip link moves the focus itself instead of navigating. */}
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById("main")?.focus();
        }}
      >
        Skip to content
      </a>
      <header class="top">
        <h1>
          PAIR <span class="where">on {me.node}</span>
        </h1>
        <nav aria-label="Views">
          {(["nodes", "jobs", "history"] as const).map((view) => (
            <a
              key={view}
              href={routeHref({ view })}
              aria-current={
                route.view === view || (view === "nodes" && route.view === "node") ? "page" : undefined
              }
            >
              {view === "nodes" ? "Nodes" : view === "jobs" ? "Jobs" : "History"}
            </a>
          ))}
        </nav>
        <button
          type="button"
          class="quiet"
          onClick={() => void signOut().finally(() => setFatal("Signed out. Run `pair ui` for a new link."))}
        >
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Current route={route} me={me} onSignedOut={() => setFatal(SIGNED_OUT)} />
      </main>
    </>
  );
}

function Current(props: {
  readonly route: Route;
  readonly me: SessionInfo;
  readonly onSignedOut: () => void;
}) {
  const { route } = props;
  switch (route.view) {
    case "nodes":
    case "node":
      return <NodesScreen {...props} />;
    case "jobs":
      return <JobsScreen {...props} />;
    case "history":
      return <HistoryScreen {...props} />;
  }
}

function NodesScreen({ route, me, onSignedOut }: Parameters<typeof Current>[0]) {
  const nodes = usePoll(() => get<NodeRow[]>("/pair/v1/nodes"), []);
  const detail = route.view === "node";
  const sponsored = usePoll(
    () => (detail ? get<SponsoredNode[]>("/pair/v1/rented") : Promise.resolve(undefined)),
    [detail],
  );
  useSignedOut(nodes.error, onSignedOut);
  const reload = () => {
    nodes.reload();
    sponsored.reload();
  };
  return (
    <Loaded polled={nodes}>
      {(rows) =>
        route.view === "node" ? (
          <NodeDetailView
            name={route.name}
            nodes={rows}
            selfName={me.node}
            sponsored={sponsored.data}
            actions={{ setShare, setPolicy }}
            refresh={reload}
          />
        ) : (
          <NodesView nodes={rows} />
        )
      }
    </Loaded>
  );
}

function JobsScreen({ onSignedOut }: Parameters<typeof Current>[0]) {
  const jobs = usePoll(() => get<Workload[]>("/pair/v1/jobs"), [], 1_000);
  useSignedOut(jobs.error, onSignedOut);
  return <Loaded polled={jobs}>{(rows) => <JobsView jobs={rows} nowMs={jobs.at ?? Date.now()} />}</Loaded>;
}

function HistoryScreen({ onSignedOut }: Parameters<typeof Current>[0]) {
  const history = usePoll(() => get<Workload[]>("/pair/v1/history?limit=500"), []);
  useSignedOut(history.error, onSignedOut);
  return <Loaded polled={history}>{(rows) => <HistoryView history={rows} />}</Loaded>;
}

function useSignedOut(error: Error | undefined, onSignedOut: () => void) {
  useEffect(() => {
    if (error instanceof ApiError && error.signedOut) onSignedOut();
  }, [error, onSignedOut]);
}

function Loaded<T>(props: {
  readonly polled: {
    readonly data: T | undefined;
    readonly error: Error | undefined;
    readonly at: number | undefined;
  };
  readonly children: (data: T) => ComponentChildren;
}) {
  const { data, error, at } = props.polled;
  return (
    <>
      {error === undefined ? (
        <p class="freshness">
          {at === undefined ? "Loading…" : `Updated ${formatTime(new Date(at).toISOString()).slice(11)}`}
        </p>
      ) : (
        <p class="freshness error" role="alert">
          Could not refresh: {error.message}
        </p>
      )}
      {data === undefined ? null : props.children(data)}
    </>
  );
}
