/**
 * Scratch space for one decision: records are replaced, never edited in place; every record written
 * gets the new version as its `rev`; entries are numbered and added to their reservation's spend in
 * one place, so spend = Σ entries holds by construction.
 * Must not know: any rule about when to write what (the decide modules own those).
 */

import type { DeploymentId } from "@pair/provision";
import type { BilledTimeEntry, LedgerEntry, TokenUsageEntry, WorkloadCost } from "./entries.js";
import type { LedgerCommand, LedgerDecision, LedgerEvent } from "./inputs.js";
import type {
  BillingEpisode,
  DeploymentBinding,
  InFlightRequest,
  LedgerState,
  RequestId,
  Reservation,
  ReservationId,
} from "./state.js";
import { dayKey } from "./time-zone.js";

type WithoutRev<T> = Omit<T, "rev">;
type EntryDraft = Omit<BilledTimeEntry, "seq"> | Omit<TokenUsageEntry, "seq">;

export class Draft {
  readonly commands: LedgerCommand[] = [];
  readonly events: LedgerEvent[] = [];
  readonly entries: LedgerEntry[] = [];
  readonly workloads: WorkloadCost[] = [];
  readonly version: number;
  /** The wall time this decision acts at; never earlier than the base state's. */
  clockMs: number;
  #nextEntrySeq: number;
  #sessionStartedAtMs: number;
  #reservations: Record<string, Reservation>;
  #bindings: Record<string, DeploymentBinding>;
  #episodes: Record<string, BillingEpisode>;
  #inFlight: Record<string, InFlightRequest>;
  /**
   * The maps this draft may write in place: copied once on the first write since the base state or
   * since the last `view` (which hands them out), so n writes cost O(n), not O(n × size), and no state
   * handed out ever changes.
   */
  #owned = new Set<object>();

  constructor(readonly base: LedgerState) {
    this.version = base.version + 1;
    this.clockMs = base.clockMs;
    this.#nextEntrySeq = base.nextEntrySeq;
    this.#sessionStartedAtMs = base.sessionStartedAtMs;
    this.#reservations = base.reservations;
    this.#bindings = base.bindings;
    this.#episodes = base.episodes;
    this.#inFlight = base.inFlight;
  }

  /** The state as it stands in this draft (for the read-only rules in budget.ts and queries). */
  get view(): LedgerState {
    this.#owned.clear();
    return {
      version: this.version,
      ledgerId: this.base.ledgerId,
      clockMs: this.clockMs,
      sessionStartedAtMs: this.#sessionStartedAtMs,
      nextEntrySeq: this.#nextEntrySeq,
      reservations: this.#reservations,
      bindings: this.#bindings,
      episodes: this.#episodes,
      inFlight: this.#inFlight,
    };
  }

  reservation(id: ReservationId): Reservation | undefined {
    return this.#reservations[id];
  }

  reservations(): Reservation[] {
    return Object.values(this.#reservations);
  }

  putReservation(r: WithoutRev<Reservation>): Reservation {
    const next = { ...r, rev: this.version } as Reservation;
    this.#reservations = this.#put(this.#reservations, next.reservationId, next);
    return next;
  }

  binding(id: DeploymentId): DeploymentBinding | undefined {
    return this.#bindings[id];
  }

  putBinding(b: WithoutRev<DeploymentBinding>): DeploymentBinding {
    const next = { ...b, rev: this.version } as DeploymentBinding;
    this.#bindings = this.#put(this.#bindings, next.deploymentId, next);
    return next;
  }

  episode(id: DeploymentId): BillingEpisode | undefined {
    return this.#episodes[id];
  }

  openEpisodes(reservationId?: ReservationId): BillingEpisode[] {
    return Object.values(this.#episodes).filter(
      (e) => e.state === "open" && (reservationId === undefined || e.reservationId === reservationId),
    );
  }

  putEpisode(e: WithoutRev<BillingEpisode>): BillingEpisode {
    const next = { ...e, rev: this.version } as BillingEpisode;
    this.#episodes = this.#put(this.#episodes, next.deploymentId, next);
    return next;
  }

  request(id: RequestId): InFlightRequest | undefined {
    return this.#inFlight[id];
  }

  requests(reservationId?: ReservationId): InFlightRequest[] {
    return Object.values(this.#inFlight).filter(
      (r) => reservationId === undefined || r.reservationId === reservationId,
    );
  }

  putRequest(r: WithoutRev<InFlightRequest>): InFlightRequest {
    const next = { ...r, rev: this.version } as InFlightRequest;
    this.#inFlight = this.#put(this.#inFlight, next.requestId, next);
    return next;
  }

  deleteRequest(id: RequestId): void {
    if (this.#owned.has(this.#inFlight)) {
      delete this.#inFlight[id];
      return;
    }
    const { [id]: _gone, ...rest } = this.#inFlight;
    this.#owned.add(rest);
    this.#inFlight = rest;
  }

  /**
   * `{ ...map, [key]: value }`, written in place when this draft already owns the map (same keys, same
   * order: an existing key keeps its place, a new one goes last).
   */
  #put<T>(map: Record<string, T>, key: string, value: T): Record<string, T> {
    // An assignment to `__proto__` would set the prototype; the literal makes an own property.
    if (this.#owned.has(map) && key !== "__proto__") {
      map[key] = value;
      return map;
    }
    const copy = { ...map, [key]: value };
    this.#owned.add(copy);
    return copy;
  }

  beginSession(atMs: number): void {
    this.#sessionStartedAtMs = atMs;
    for (const r of this.reservations()) this.putReservation({ ...r, spentThisSessionMicroUsd: 0 });
  }

  /** Number an entry and add it to its reservation's spend. Entries of 0 µUSD are not made. */
  enter(entry: EntryDraft): LedgerEntry | undefined {
    if (entry.amountMicroUsd === 0) return undefined;
    const reservation = this.#reservations[entry.reservationId];
    if (reservation === undefined)
      throw new Error(`invariant: entry for unknown reservation ${entry.reservationId}`);
    const numbered = { ...entry, seq: this.#nextEntrySeq } as LedgerEntry;
    this.#nextEntrySeq += 1;
    this.entries.push(numbered);
    const day = dayKey(reservation.budget.timeZone, entry.atMs);
    this.putReservation({
      ...reservation,
      spentByDayMicroUsd: {
        ...reservation.spentByDayMicroUsd,
        [day]: (reservation.spentByDayMicroUsd[day] ?? 0) + entry.amountMicroUsd,
      },
      spentTotalMicroUsd: reservation.spentTotalMicroUsd + entry.amountMicroUsd,
      spentThisSessionMicroUsd: reservation.spentThisSessionMicroUsd + entry.amountMicroUsd,
    });
    return numbered;
  }

  finish(): LedgerDecision {
    return {
      state: this.view,
      commands: this.commands,
      events: this.events,
      entries: this.entries,
      workloads: this.workloads,
    };
  }
}
