import { applyKycCallback, recognizeStored, type KycProjectionDeps } from './apply-callback';
import { applyToCollection, type CollectionProjectionDeps } from './collections';
import type { EventLookup, EventStore, ReceivedEvent } from '@shared/ports/callbacks';

export interface ReplayEventsDeps extends Omit<KycProjectionDeps, 'subjects'> {
  events: EventStore & EventLookup;
  collections: CollectionProjectionDeps['collections'];
  /**
   * The KYC subjects; left out on a stack whose stage leaves KYC out (no KYC table to write): the
   * range's order notifications are applied, and its KYC callbacks are not applied (nor read), only
   * counted in `kycNotDeployed`.
   */
  subjects?: KycProjectionDeps['subjects'];
}

export interface ReplayRange {
  since: Date;
  /** Exclusive; defaults to now. */
  until?: Date;
}

/** How many unrecognized events one replay names; the rest are counted only. */
export const UNRECOGNIZED_NAMED = 20;

/** The longest reason kept for an unrecognized event (it may quote the body's words). */
const REASON_MAX = 200;

/** A stored callback the current code still does not recognize, and why. */
export interface UnrecognizedEvent {
  eventId: string;
  source: ReceivedEvent['source'];
  receivedAt: string;
  reason: string;
}

/** Counts of one replay. */
export interface ReplayResult {
  scanned: number;
  /** Events that changed a projection (they had been missed). */
  applied: number;
  /** Events the projection already reflected. */
  unchanged: number;
  /** Stored bodies the current code still does not recognize. */
  unrecognized: number;
  /**
   * The first UNRECOGNIZED_NAMED of them, oldest first, each with why it is not recognized, so an
   * operator can open them (`events list`, the console's body viewer); `unrecognized` counts them all.
   */
  unrecognizedEvents: UnrecognizedEvent[];
  /** Order notifications about payouts: hints only, the reconciler owns payouts, so replay leaves them. */
  skipped: number;
  /**
   * Only when the replay was given no KYC subjects (a stack without KYC): the KYC callbacks of the
   * range, left unapplied since there is no KYC subject to apply them to.
   */
  kycNotDeployed?: number;
}

/** A range that cannot be replayed (e.g. `until` before `since`). */
export class ReplayRangeError extends Error {
  override name = 'ReplayRangeError';
}

type Outcome = 'applied' | 'unchanged' | 'skipped' | 'kycNotDeployed' | { unrecognized: string };

/** Applies one stored event to its projection: a KYC subject, or the collection an order notification names. */
async function replayOne(deps: ReplayEventsDeps, received: ReceivedEvent): Promise<Outcome> {
  const { subjects } = deps;
  if (received.source === 'kyc' && subjects === undefined) return 'kycNotDeployed';
  if (received.source !== 'payout-notification' && received.appId === undefined) return 'skipped';
  // The time index carries no bodies: the one event replay applies is read whole by its id.
  const stored = await deps.events.get(received.eventId);
  // Expired (TTL) between the listing and this read: nothing left to apply.
  if (stored === undefined) return 'skipped';
  const recognition = recognizeStored(stored);
  if (recognition.kind === 'payout-notification') {
    const result = await applyToCollection(deps, recognition.event, stored.eventId);
    return result === 'not-a-collection' ? 'skipped' : result;
  }
  if (recognition.kind === 'no-app') return 'skipped';
  if (recognition.kind === 'unrecognized') return { unrecognized: recognition.reason };
  // Only a KYC callback is left here, and those return above when there are no subjects.
  if (subjects === undefined) return 'kycNotDeployed';
  return applyKycCallback({ ...deps, subjects }, recognition.appId, recognition.event, stored.eventId);
}

/**
 * Re-applies stored callbacks received in [since, until), oldest first: KYC callbacks to their
 * subjects, order notifications to the collections they name (notifications about payouts are left
 * to the reconciler). Each stored body is parsed again with the current code, so a payload that was
 * unrecognized when it arrived is applied once the code understands it. Idempotent: applying an
 * event a projection already reflects writes nothing, so a replay over any range leaves correct
 * projections as they are. Without `deps.subjects` (a stack without KYC) KYC callbacks are counted in
 * `kycNotDeployed` and left as they are; order notifications replay as usual.
 */
export async function replayEvents(deps: ReplayEventsDeps, range: ReplayRange): Promise<ReplayResult> {
  const until = range.until ?? deps.clock.now();
  if (Number.isNaN(range.since.getTime()) || Number.isNaN(until.getTime()) || until <= range.since) {
    throw new ReplayRangeError('replay needs a valid range with until after since');
  }
  const result: ReplayResult = { scanned: 0, applied: 0, unchanged: 0, unrecognized: 0, unrecognizedEvents: [], skipped: 0 };
  if (deps.subjects === undefined) result.kycNotDeployed = 0;
  for await (const received of deps.events.receivedBetween(range.since, until)) {
    result.scanned += 1;
    const outcome = await replayOne(deps, received);
    if (outcome === 'kycNotDeployed') {
      result.kycNotDeployed = (result.kycNotDeployed ?? 0) + 1;
      continue;
    }
    if (typeof outcome === 'string') {
      result[outcome] += 1;
      continue;
    }
    result.unrecognized += 1;
    if (result.unrecognizedEvents.length < UNRECOGNIZED_NAMED) {
      const reason = outcome.unrecognized.length > REASON_MAX ? `${outcome.unrecognized.slice(0, REASON_MAX)}…` : outcome.unrecognized;
      result.unrecognizedEvents.push({ eventId: received.eventId, source: received.source, receivedAt: received.receivedAt, reason });
    }
  }
  const { unrecognizedEvents, ...counts } = result;
  deps.log.info('events replayed', { since: range.since.toISOString(), until: until.toISOString(), ...counts, unrecognizedEventIds: unrecognizedEvents.map((e) => e.eventId) });
  return result;
}
