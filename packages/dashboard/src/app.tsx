/**
 * The dashboard's shell: signs in (the session's node name and CSRF token), shows the navigation,
 * and the view the URL's fragment names, each refreshed at once when the node's live events say its
 * topic changed (and by polling: every 10 s while the events flow, every 1.5 s when they do not).
 * When the session has ended it says how to get a new login link.
 * Must not know: how a view lays out its data.
 */

import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import {
  ApiError,
  cancelBatch,
  createRented,
  get,
  lifecycle,
  nodeNow,
  resetRented,
  session,
  setPolicy,
  setShare,
  signOut,
  stateHistory,
} from "./api.js";
import { contextWindows, formatTime } from "./format.js";
import { pollInterval, useLiveEvents, type Live } from "./live.js";
import { parseRoute, routeHref, type Route } from "./route.js";
import { spendSummary } from "./spend-summary.js";
import { usePoll } from "./use-poll.js";
import { AddRentedView, type AddRentedDeps } from "./views/add-rented-view.js";
import { BatchesView } from "./views/batches-view.js";
import { HistoryView } from "./views/history-view.js";
import { JobsView } from "./views/jobs-view.js";
import { NodeDetailView } from "./views/node-detail-view.js";
import { NodesView } from "./views/nodes-view.js";
import type {
  BatchList,
  HardwareOffer,
  ModelRow,
  NodeRow,
  RentedAccount,
  SessionInfo,
  SpendSeries,
  SponsoredNode,
  Workload,
} from "./wire.js";

const SIGNED_OUT =
  "Your dashboard session has ended (signed out, expired, or the node restarted). Run `pair ui` on the " +
  "node's machine and open the new link.";

const VIEW_NAMES = { nodes: "Nodes", jobs: "Jobs", batches: "Batches", history: "History" } as const;

export function App() {
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash));
  const [me, setMe] = useState<SessionInfo | undefined>();
  const [fatal, setFatal] = useState<string | undefined>();
  const live = useLiveEvents();

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
          {(["nodes", "jobs", "batches", "history"] as const).map((view) => (
            <a
              key={view}
              href={routeHref({ view })}
              aria-current={
                route.view === view || (view === "nodes" && route.view === "node") ? "page" : undefined
              }
            >
              {VIEW_NAMES[view]}
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
        <Current route={route} me={me} live={live} onSignedOut={() => setFatal(SIGNED_OUT)} />
      </main>
    </>
  );
}

function Current(props: {
  readonly route: Route;
  readonly me: SessionInfo;
  readonly live: Live;
  readonly onSignedOut: () => void;
}) {
  const { route } = props;
  switch (route.view) {
    case "nodes":
    case "node":
      return <NodesScreen {...props} />;
    case "add":
      return <AddScreen {...props} />;
    case "jobs":
      return <JobsScreen {...props} />;
    case "batches":
      return <BatchesScreen {...props} />;
    case "history":
      return <HistoryScreen {...props} />;
  }
}

function NodesScreen({ route, me, live, onSignedOut }: Parameters<typeof Current>[0]) {
  const every = pollInterval(live);
  const nodes = usePoll(() => get<NodeRow[]>("/pair/v1/nodes"), [live.seen.nodes, live.seen.rented], every);
  const models = usePoll(
    () => get<ModelRow[]>("/pair/v1/models"),
    [live.seen.nodes, live.seen.rented],
    every,
  );
  const windows = contextWindows(models.data);
  const detail = route.view === "node" ? route.name : undefined;
  // The caps of this node's own rented nodes: the detail's facts and the overview's sums.
  const sponsored = usePoll(() => get<SponsoredNode[]>("/pair/v1/rented"), [live.seen.rented], every);
  const ownDetail = detail !== undefined && sponsored.data?.some((s) => s.name === detail) === true;
  const history = usePoll(
    () => (ownDetail ? stateHistory(detail) : Promise.resolve(undefined)),
    [detail, ownDetail, live.seen.rented],
    every,
  );
  const ownManaged =
    detail !== undefined && sponsored.data?.some((s) => s.name === detail && s.managed != null);
  const spend = usePoll(
    () =>
      ownManaged
        ? Promise.all(
            (["24h", "30d"] as const).map((range) =>
              get<SpendSeries>(`/pair/v1/rented/spend?name=${encodeURIComponent(detail)}&range=${range}`),
            ),
          )
        : Promise.resolve(undefined),
    [detail, ownManaged, live.seen.rented],
    every,
  );
  const managedNames = (sponsored.data ?? []).filter((s) => s.managed != null).map((s) => s.name);
  const overviewSpend = usePoll(
    () =>
      detail === undefined
        ? Promise.all(
            managedNames.flatMap((name) =>
              (["24h", "30d"] as const).map((range) =>
                get<SpendSeries>(`/pair/v1/rented/spend?name=${encodeURIComponent(name)}&range=${range}`),
              ),
            ),
          )
        : Promise.resolve(undefined),
    [detail, managedNames.join(","), live.seen.rented],
    every,
  );
  const today = usePoll(
    () =>
      detail === undefined
        ? get<Workload[]>(`/pair/v1/history?since=${encodeURIComponent(startOfDay(nodeNow()))}&limit=10000`)
        : Promise.resolve(undefined),
    [detail, live.seen.jobs],
    every,
  );
  // The idle timer counts each second, whatever the polls do.
  const nowMs = useNow(true);
  useSignedOut(nodes.error, onSignedOut);
  const reload = () => {
    nodes.reload();
    models.reload();
    sponsored.reload();
    history.reload();
    spend.reload();
  };
  return (
    <Loaded polled={nodes} live={live}>
      {(rows) =>
        route.view === "node" ? (
          <NodeDetailView
            name={route.name}
            nodes={rows}
            selfName={me.node}
            sponsored={sponsored.data}
            history={history.data}
            spend={spend.data}
            actions={{ setShare, setPolicy, lifecycle, reset: resetRented }}
            windows={windows}
            nowMs={nowMs}
            refresh={reload}
          />
        ) : (
          <NodesView
            nodes={rows}
            summary={spendSummary(rows, sponsored.data, today.data, nowMs)}
            spend={overviewSpend.data}
            windows={windows}
          />
        )
      }
    </Loaded>
  );
}

/** Local midnight of the node's day, as an ISO time (the overview counts today's requests). */
function startOfDay(ms: number): string {
  const d = new Date(ms);
  return new Date(d.getFullYear(), d.getMonth(), d.getDate()).toISOString();
}

const ADD_DEPS: AddRentedDeps = {
  account: () => get<RentedAccount>("/pair/v1/rented/account"),
  catalog: () => get<{ repo_id: string }[]>("/pair/v1/rented/catalog"),
  hardware: (namespace) =>
    get<HardwareOffer[]>(
      `/pair/v1/rented/hardware${namespace === null ? "" : `?namespace=${encodeURIComponent(namespace)}`}`,
    ),
  create: createRented,
};

function AddScreen({ live, onSignedOut }: Parameters<typeof Current>[0]) {
  const [creating, setCreating] = useState<string | undefined>();
  // While a creation runs, its progress is asked for every second (api-create.md: ≤ 1 s).
  const sponsored = usePoll(
    () => (creating === undefined ? Promise.resolve(undefined) : get<SponsoredNode[]>("/pair/v1/rented")),
    [creating, live.seen.rented],
    1_000,
  );
  useSignedOut(sponsored.error, onSignedOut);
  return (
    <AddRentedView deps={ADD_DEPS} sponsored={sponsored.data} creating={creating} onCreating={setCreating} />
  );
}

function JobsScreen({ live, onSignedOut }: Parameters<typeof Current>[0]) {
  // Elapsed times tick every second, so Jobs keeps its 1 s poll even while events flow.
  const jobs = usePoll(() => get<Workload[]>("/pair/v1/jobs"), [live.seen.jobs], 1_000);
  useSignedOut(jobs.error, onSignedOut);
  return (
    <Loaded polled={jobs} live={live}>
      {(rows) => <JobsView jobs={rows} nowMs={jobs.at ?? nodeNow()} />}
    </Loaded>
  );
}

function BatchesScreen({ live, onSignedOut }: Parameters<typeof Current>[0]) {
  // A batch's lines are workloads: each one's start and end is a `jobs` event.
  const batches = usePoll(() => get<BatchList>("/pair/v1/batches?limit=100"), [live.seen.jobs], 1_500);
  useSignedOut(batches.error, onSignedOut);
  return (
    <Loaded polled={batches} live={live}>
      {(list) => (
        <BatchesView
          batches={list.data}
          nowMs={batches.at ?? nodeNow()}
          cancel={cancelBatch}
          refresh={batches.reload}
        />
      )}
    </Loaded>
  );
}

function HistoryScreen({ live, onSignedOut }: Parameters<typeof Current>[0]) {
  const history = usePoll(
    () => get<Workload[]>("/pair/v1/history?limit=1000"),
    [live.seen.jobs],
    pollInterval(live),
  );
  useSignedOut(history.error, onSignedOut);
  return (
    <Loaded polled={history} live={live}>
      {(rows) => <HistoryView history={rows} nowMs={history.at ?? nodeNow()} />}
    </Loaded>
  );
}

/** The node's time now (its clock, which in the demo is virtual), once a second while `ticking`. */
function useNow(ticking: boolean): number {
  const [now, setNow] = useState(() => nodeNow());
  useEffect(() => {
    if (!ticking) return;
    const t = setInterval(() => setNow(nodeNow()), 1_000);
    return () => clearInterval(t);
  }, [ticking]);
  return now;
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
  readonly live: Live;
  readonly children: (data: T) => ComponentChildren;
}) {
  const { data, error, at } = props.polled;
  return (
    <>
      {error === undefined ? (
        <p class="freshness">
          {props.live.connected ? <span class="live-dot">Live</span> : null}
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
