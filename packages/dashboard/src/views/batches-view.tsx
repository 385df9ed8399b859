/**
 * Batches: the OpenAI batches this node holds, newest first — status, lines done of total with a
 * progress bar, failed, running and waiting lines, each node's share of the lines done, its
 * `--rent auto` rental (node, GPU, state, spend against its budget), when it was created and ends (on
 * the node's clock), who submitted it, and a Cancel (confirmed) while lines are still to run. A batch that
 * could not start says why. No upload and no create: those are `pair batch submit`'s.
 * Must not know: HTTP (the cancel goes through the callback it is given).
 */

import { useState } from "preact/hooks";
import { StateBadge } from "../badges.js";
import { ConfirmDialog } from "../confirm-dialog.js";
import { formatDuration, formatRental, formatShare, formatTime } from "../format.js";
import type { Batch } from "../wire.js";

/** Statuses in which a cancel still changes something. */
const CANCELLABLE: ReadonlySet<string> = new Set(["validating", "in_progress", "finalizing"]);

export function BatchesView({
  batches,
  nowMs,
  cancel,
  refresh,
}: {
  readonly batches: readonly Batch[];
  readonly nowMs: number;
  readonly cancel: (id: string) => Promise<unknown>;
  readonly refresh: () => void;
}) {
  const [asking, setAsking] = useState<string | undefined>();
  const [message, setMessage] = useState<{ text: string; error: boolean } | undefined>();
  const confirmCancel = (id: string) => {
    setAsking(undefined);
    cancel(id).then(
      () => {
        setMessage({ text: `${id} cancelling`, error: false });
        refresh();
      },
      (error: unknown) =>
        setMessage({ text: error instanceof Error ? error.message : String(error), error: true }),
    );
  };
  return (
    <section aria-labelledby="batches-title">
      <h2 id="batches-title">Batches</h2>
      {batches.length === 0 ? (
        <p class="empty">
          No batches on this node. Submit one with <code>pair batch submit FILE.jsonl</code> or the OpenAI
          Batch API.
        </p>
      ) : (
        <table class="grid batches">
          <caption class="sr-only">Batches on this node, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Batch</th>
              <th scope="col">Status</th>
              <th scope="col">Progress</th>
              <th scope="col">Lines</th>
              <th scope="col">Served by</th>
              <th scope="col">Rental</th>
              <th scope="col">Created</th>
              <th scope="col">Ends</th>
              <th scope="col">Requester</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {batches.map((b) => (
              <BatchRow key={b.id} batch={b} nowMs={nowMs} onCancel={() => setAsking(b.id)} />
            ))}
          </tbody>
        </table>
      )}
      <p role="status" aria-live="polite" class={message?.error === true ? "error" : "ok"}>
        {message?.text ?? ""}
      </p>
      {asking === undefined ? null : (
        <ConfirmDialog
          title={`Cancel ${asking}?`}
          confirmLabel="Cancel the batch"
          danger
          onCancel={() => setAsking(undefined)}
          onConfirm={() => confirmCancel(asking)}
        >
          <p>
            Lines not yet run end in its error file as <code>batch_cancelled</code>; lines running now are
            stopped. Answers already in stay in its output file.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}

function BatchRow({
  batch: b,
  nowMs,
  onCancel,
}: {
  readonly batch: Batch;
  readonly nowMs: number;
  readonly onCancel: () => void;
}) {
  const { total, completed, failed } = b.request_counts;
  const done = completed + failed;
  const problem = b.errors?.data[0];
  return (
    <tr data-batch={b.id} data-status={b.status}>
      <th scope="row" data-label="Batch">
        <div class="batch-cell">
          <span class="batch-id">{b.id}</span>
          <span class="muted">{b.endpoint}</span>
          {problem === undefined ? null : (
            <span class="batch-error">
              {problem.code}: {problem.message}
            </span>
          )}
        </div>
      </th>
      <td data-label="Status">
        <StateBadge state={b.status} />
      </td>
      <td data-label="Progress">
        <span class="batch-progress">
          <progress max={Math.max(total, 1)} value={done} aria-label={`${b.id}: ${done} of ${total} lines`} />
          {done} of {total}
        </span>
      </td>
      <td data-label="Lines">
        {completed} done, {failed} failed, {b.pair.running} running, {b.pair.pending} waiting
        {b.pair.reruns === 0 ? null : `, ${b.pair.reruns} run again`}
      </td>
      <td data-label="Served by">{formatShare(b.pair.by_node)}</td>
      <td data-label="Rental">{formatRental(b.pair.rent)}</td>
      <td data-label="Created">{formatTime(new Date(b.created_at * 1000).toISOString())}</td>
      <td data-label="Ends">{ends(b, nowMs)}</td>
      <td data-label="Requester">{b.pair.requester}</td>
      <td data-label="Action">
        {CANCELLABLE.has(b.status) ? (
          <button type="button" class="danger" onClick={onCancel} aria-label={`Cancel ${b.id}`}>
            Cancel…
          </button>
        ) : (
          "—"
        )}
      </td>
    </tr>
  );
}

/** When it ended, or when its completion window ends (and how long that is from now). */
function ends(b: Batch, nowMs: number): string {
  const ended = b.completed_at ?? b.cancelled_at ?? b.expired_at ?? b.failed_at;
  if (ended !== null) return `ended ${formatTime(new Date(ended * 1000).toISOString())}`;
  if (b.expires_at === null) return "—";
  const leftMs = b.expires_at * 1000 - nowMs;
  return `window ends ${formatTime(new Date(b.expires_at * 1000).toISOString())}${leftMs > 0 ? ` (in ${formatDuration(leftMs)})` : ""}`;
}
