/**
 * A rented node's detail: state, why it does not take requests, the provider's state and message,
 * warnings, price; for a managed node the idle timer, open stop obligations, its spend this session /
 * today / this month against the caps (a chart), and its state history. On its sponsor the actions:
 * pause, resume, delete (each confirmed; delete by typing the node's name), share on/off, the
 * routing policy, and, while either was changed here, a reset to the config's values. A peer sees the
 * facts and no action: they belong to the sponsor.
 * Must not know: HTTP (changes go through the callbacks it is given).
 */

import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { KindLabel, StateBadge } from "../badges.js";
import { SpendChart, SpendSeriesChart } from "../charts.js";
import { ConfirmDialog } from "../confirm-dialog.js";
import {
  formatDuration,
  formatHourly,
  formatModels,
  formatTime,
  providerName,
  type ContextWindows,
  stateText,
  withReadableTimes,
} from "../format.js";
import { foldStateHistory, type HistoryRow } from "../state-folding.js";
import {
  ROUTING_USES,
  type LifecycleAction,
  type RentedRow,
  type RoutingUse,
  type SpendSeries,
  type SponsoredNode,
  type StateChange,
} from "../wire.js";

export interface RentedActions {
  setShare(name: string, share: boolean): Promise<unknown>;
  setPolicy(name: string, use: RoutingUse): Promise<unknown>;
  lifecycle(name: string, action: LifecycleAction): Promise<unknown>;
  /** Drop the share and policy set at run time (`pair rented reset`). */
  reset(name: string): Promise<unknown>;
}

export interface RentedDetailProps {
  readonly node: RentedRow;
  /** This node's name: a rented node it sponsors gets actions. */
  readonly selfName: string;
  /** The sponsor's own view of it (GET /pair/v1/rented), when this node is the sponsor. */
  readonly sponsored: SponsoredNode | undefined;
  /** Its state history, oldest first (sponsor only). */
  readonly history: readonly StateChange[] | undefined;
  /** Billed spend over the last 24 h and 30 days, from the sponsor's ledger (managed nodes). */
  readonly spend?: readonly SpendSeries[] | undefined;
  readonly actions: RentedActions;
  /** Each node's context window per model (`/pair/v1/models`). */
  readonly windows: ContextWindows;
  readonly nowMs: number;
  /** Ask the node again now (after a change). */
  readonly refresh: () => void;
}

export function RentedDetail(props: RentedDetailProps) {
  const { node, sponsored } = props;
  const own = node.sponsor === props.selfName;
  const warnings = sponsored?.warnings ?? node.warnings ?? [];
  const managed = sponsored?.managed ?? null;
  const message = sponsored?.provider_message ?? managed?.last_error ?? sponsored?.last_error ?? null;
  return (
    <>
      <dl class="facts">
        <Fact term="Kind">
          <KindLabel kind="rented" label={node.label} />
        </Fact>
        <Fact term="State">
          <StateBadge state={node.state} />
          {managed?.paused_by == null ? null : <span class="muted"> ({managed.paused_by})</span>}
        </Fact>
        {sponsored?.provider_state == null ? null : (
          <Fact term="Provider's state">{sponsored.provider_state}</Fact>
        )}
        <Fact term="Takes requests">
          {node.eligible ? "yes" : `no: ${withReadableTimes(node.reason ?? "not eligible")}`}
        </Fact>
        <Fact term="Provider">
          {providerName(node.provider)} <span class="muted">({node.provider})</span>
        </Fact>
        <Fact term="Sponsor">{own ? `${node.sponsor} (this node)` : node.sponsor}</Fact>
        <Fact term="GPU">{node.gpu ?? "—"}</Fact>
        <Fact term="Price">{formatHourly(managed?.usd_per_hour ?? node.usd_per_hour)}</Fact>
        <Fact term="Models">{formatModels(node.models, node.name, props.windows)}</Fact>
        <Fact term="Shared with the cluster">{node.shared ? "yes" : "no"}</Fact>
        <Fact term="Routing policy">{node.policy}</Fact>
        {managed === null ? null : (
          <>
            <Fact term="Idle timer">{idleText(managed, props.nowMs)}</Fact>
            <Fact term="Open stop obligations">
              {managed.open_obligations === 0
                ? "none"
                : `${managed.open_obligations} — PAIR owes its stop; closed only when the provider confirms one`}
            </Fact>
          </>
        )}
        {sponsored?.credential == null ? null : <Fact term="Credential (name)">{sponsored.credential}</Fact>}
      </dl>
      {message === null ? null : (
        <div class="provider-message" role="note" aria-label="Provider message">
          <h3>Provider message</h3>
          <p>{withReadableTimes(message)}</p>
        </div>
      )}
      {warnings.length === 0 ? null : (
        <div class="warnings" role="note" aria-label="Warnings">
          <h3>Warnings</h3>
          <ul>
            {warnings.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </div>
      )}
      {managed?.spend_usd != null || node.spend_usd == null ? null : (
        <SpendChart
          title="Cost, as its sponsor publishes it"
          rows={[
            { label: "This session", usd: node.spend_usd.session, capUsd: null },
            { label: "Today", usd: node.spend_usd.day, capUsd: null },
            { label: "This month", usd: node.spend_usd.month, capUsd: null },
          ]}
        />
      )}
      {managed?.spend_usd == null ? null : (
        <SpendChart
          title={`Cost${managed.budget_exceeded ? " — budget reached" : ""}`}
          {...(sponsored?.budget?.usd_per_day == null && sponsored?.budget?.usd_per_month == null
            ? {
                warning:
                  "No cap: this billed node runs with budget: { unlimited: true }. Set budget: " +
                  "{ usd_per_day: N } in its config entry, or attach it again with --usd-per-day N.",
              }
            : {})}
          rows={[
            { label: "This session", usd: managed.spend_usd.session, capUsd: null },
            {
              label: "Today",
              usd: managed.spend_usd.today,
              capUsd: sponsored?.budget?.usd_per_day ?? null,
              capLabel: "per day",
            },
            {
              label: "This month",
              usd: managed.spend_usd.month,
              capUsd: sponsored?.budget?.usd_per_month ?? null,
              capLabel: "per month",
            },
          ]}
        />
      )}
      {props.spend === undefined || props.spend.length === 0 ? null : (
        <div class="series">
          {props.spend.map((series) => (
            <SpendSeriesChart key={series.range} points={series.points} range={series.range} />
          ))}
        </div>
      )}
      {own ? (
        <SponsorActions {...props} />
      ) : (
        <p class="note">
          Its sponsor, {node.sponsor}, holds this node: pausing, deleting, sharing and policy are changed on{" "}
          {node.sponsor}'s dashboard.
        </p>
      )}
      {props.history === undefined ? null : <StateHistory history={props.history} />}
    </>
  );
}

function idleText(m: NonNullable<SponsoredNode["managed"]>, nowMs: number): string {
  if (m.last_active_at === undefined || m.idle_pause_min === undefined) return "—";
  const idleMs = Math.max(0, nowMs - Date.parse(m.last_active_at));
  const limitMs = m.idle_pause_min * 60_000;
  const left = limitMs - idleMs;
  return (
    `${idleMs < 1_000 ? "under a second" : formatDuration(idleMs)} since the last PAIR workload, of ${m.idle_pause_min} min` +
    (left > 0 ? ` (idle pause in ${formatDuration(left)})` : "")
  );
}

function StateHistory({ history }: { readonly history: readonly StateChange[] }) {
  const rows = foldStateHistory(history);
  return (
    <section class="state-history" aria-labelledby="state-history-title">
      <h3 id="state-history-title">State history</h3>
      {rows.length === 0 ? (
        <p class="empty">No state recorded yet.</p>
      ) : (
        <table class="grid">
          <caption class="sr-only">State changes, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">State</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>{rows.map(historyRow)}</tbody>
        </table>
      )}
    </section>
  );
}

function historyRow(row: HistoryRow) {
  if (row.kind === "change") {
    const c = row.change;
    return (
      <tr key={`${c.at}-${c.state}-${c.reason ?? ""}`} data-state-change={c.state}>
        <td data-label="When">{formatTime(c.at)}</td>
        <td data-label="State">
          <StateBadge state={c.state} />
        </td>
        <td data-label="Why">{c.reason === null ? "—" : withReadableTimes(c.reason)}</td>
      </tr>
    );
  }
  const first = row.changes[0];
  const last = row.changes[row.changes.length - 1];
  if (first === undefined || last === undefined) return null;
  const spanMs = Date.parse(last.at) - Date.parse(first.at);
  return (
    <tr key={`burst-${first.at}`} data-state-change={last.state} data-burst={row.changes.length}>
      <td data-label="When">
        {formatTime(first.at)} – {formatTime(last.at).slice(11)}
      </td>
      <td data-label="State">
        <StateBadge state={last.state} />
      </td>
      <td data-label="Why">
        <details>
          <summary>
            {row.changes.length} changes in {formatDuration(spanMs)} between{" "}
            {row.states.map(stateText).join(", ")}, all at the provider
          </summary>
          <ol class="burst">
            {row.changes.map((c) => (
              <li key={`${c.at}-${c.state}`}>
                {formatTime(c.at).slice(11)} {stateText(c.state)}
                {c.reason === null ? "" : ` — ${c.reason}`}
              </li>
            ))}
          </ol>
        </details>
      </td>
    </tr>
  );
}

const CONFIRM: Readonly<Record<LifecycleAction, { title: string; text: string; done: string }>> = {
  pause: {
    title: "Pause",
    text: "It stops billing once the provider confirms the pause. Requests for its models wake it again when “wake on request” is on.",
    done: "paused",
  },
  resume: {
    title: "Resume",
    text: "It starts again and bills by the minute from then on (a cold start can take minutes).",
    done: "resumed",
  },
  delete: {
    title: "Delete",
    text: "The endpoint is deleted at the provider: this cannot be undone. Its cost history stays.",
    done: "deleted",
  },
};

function SponsorActions(props: RentedDetailProps) {
  const { node, actions, refresh, sponsored } = props;
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ text: string; error: boolean } | undefined>();
  const [policy, setPolicy] = useState<RoutingUse>(node.policy);
  // The policy can change elsewhere (a reset, the CLI): the menu follows the node's.
  useEffect(() => setPolicy(node.policy), [node.policy]);
  const [asking, setAsking] = useState<LifecycleAction | undefined>();
  const managed = sponsored?.managed != null;
  const paused = node.state === "paused";
  // While a change is on its way the controls ignore clicks but stay focusable (`aria-disabled`,
  // not `disabled`, which would drop the keyboard focus to the page).
  const run = async (what: () => Promise<unknown>, done: string) => {
    if (busy) return;
    setBusy(true);
    try {
      await what();
      setMessage({ text: done, error: false });
      refresh();
    } catch (error) {
      setMessage({ text: error instanceof Error ? error.message : String(error), error: true });
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="actions" aria-labelledby="actions-title">
      <h3 id="actions-title">Sponsor's actions</h3>
      {managed ? (
        <div class="action-row">
          <span>Lifecycle</span>
          <button type="button" aria-disabled={busy || paused} onClick={() => !paused && setAsking("pause")}>
            Pause
          </button>
          <button type="button" aria-disabled={busy || !paused} onClick={() => paused && setAsking("resume")}>
            Resume
          </button>
          <button type="button" class="danger" aria-disabled={busy} onClick={() => setAsking("delete")}>
            Delete…
          </button>
        </div>
      ) : (
        <p class="note">Pause, resume and delete are for nodes PAIR manages (lifecycle.managed: true).</p>
      )}
      <div class="action-row">
        <span id="share-label">Share with the cluster</span>
        <button
          type="button"
          role="switch"
          aria-checked={node.shared}
          aria-labelledby="share-label"
          class={`switch ${node.shared ? "on" : "off"}`}
          aria-disabled={busy}
          onClick={() =>
            void run(
              () => actions.setShare(node.name, !node.shared),
              node.shared ? `${node.name} is no longer shared` : `${node.name} is shared with the cluster`,
            )
          }
        >
          {node.shared ? "On" : "Off"}
        </button>
      </div>
      <form
        class="action-row"
        onSubmit={(e) => {
          e.preventDefault();
          if (policy === node.policy) return;
          void run(() => actions.setPolicy(node.name, policy), `${node.name}: routing policy ${policy}`);
        }}
      >
        <label for="policy">Routing policy</label>
        <select id="policy" value={policy} onChange={(e) => setPolicy(e.currentTarget.value as RoutingUse)}>
          {ROUTING_USES.map((u) => (
            <option key={u} value={u}>
              {u}
            </option>
          ))}
        </select>
        <button type="submit" aria-disabled={busy || policy === node.policy}>
          Apply
        </button>
      </form>
      {sponsored?.overridden === true ? (
        <div class="action-row">
          <span>Changed here, kept over the config file</span>
          <button
            type="button"
            aria-disabled={busy}
            onClick={() =>
              void run(
                () => actions.reset(node.name),
                `${node.name}: sharing and policy from the config again`,
              )
            }
          >
            Reset to config
          </button>
        </div>
      ) : null}
      <p role="status" aria-live="polite" class={message?.error === true ? "error" : "ok"}>
        {message?.text ?? ""}
      </p>
      {asking === undefined ? null : (
        <ConfirmDialog
          title={`${CONFIRM[asking].title} ${node.name}?`}
          confirmLabel={`${CONFIRM[asking].title} ${node.name}`}
          danger={asking === "delete"}
          {...(asking === "delete" ? { typeToConfirm: node.name } : {})}
          onCancel={() => setAsking(undefined)}
          onConfirm={() => {
            const action = asking;
            setAsking(undefined);
            void run(() => actions.lifecycle(node.name, action), `${node.name} ${CONFIRM[action].done}`);
          }}
        >
          <p>{CONFIRM[asking].text}</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

export function Fact({ term, children }: { readonly term: string; readonly children: ComponentChildren }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}
