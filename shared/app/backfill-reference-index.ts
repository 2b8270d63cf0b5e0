import { referenceNamedBy } from '@shared/domain/callbacks';
import type { EventStore, ReferenceIndexBackfill } from '@shared/ports/callbacks';
import type { Clock, Log } from '@shared/ports/runtime';
import { ReplayRangeError, type ReplayRange } from './replay-events';

export interface BackfillReferenceIndexDeps {
  events: EventStore & ReferenceIndexBackfill;
  clock: Clock;
  log: Log;
}

/** Counts of one backfill. */
export interface BackfillResult {
  scanned: number;
  /** Callbacks added to the by-reference listing (they had been stored before it existed). */
  added: number;
  /** Callbacks already in it, or expired between the listing and the write. */
  unchanged: number;
  /** Callbacks that name no reference (unrecognized ones stored before they were listed by the reference they name, or naming none). */
  noReference: number;
}

/** Conditional writes in flight at once: enough to hide the round trip, few enough to stay far from throttling. */
const IN_FLIGHT = 16;

/**
 * Adds the callbacks received in [since, until) to the by-reference listing (the payout page's
 * "callbacks that named it", `payrelay events list --reference`) when they were stored before that
 * listing existed. It walks the time listing, never the table, and each write is conditional on the
 * callback not being listed yet, so a second run, or a run over callbacks stored by the current
 * version, adds nothing and changes nothing else.
 */
export async function backfillReferenceIndex(deps: BackfillReferenceIndexDeps, range: ReplayRange): Promise<BackfillResult> {
  const until = range.until ?? deps.clock.now();
  if (Number.isNaN(range.since.getTime()) || Number.isNaN(until.getTime()) || until <= range.since) {
    throw new ReplayRangeError('the backfill needs a valid range with until after since');
  }
  const result: BackfillResult = { scanned: 0, added: 0, unchanged: 0, noReference: 0 };
  const inFlight = new Set<Promise<void>>();
  // A failed write stops the walk; the writes already sent finish first, and a rerun resumes harmlessly.
  let failure: { error: unknown } | undefined;
  for await (const received of deps.events.receivedBetween(range.since, until)) {
    if (failure) break;
    result.scanned += 1;
    if (referenceNamedBy(received) === undefined) {
      result.noReference += 1;
      continue;
    }
    const write: Promise<void> = deps.events
      .addToReferenceIndex(received)
      .then(
        (outcome) => {
          result[outcome] += 1;
        },
        (error: unknown) => {
          failure ??= { error };
        },
      )
      .finally(() => inFlight.delete(write));
    inFlight.add(write);
    if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  if (failure) throw failure.error;
  deps.log.info('reference listing backfilled', { since: range.since.toISOString(), until: until.toISOString(), ...result });
  return result;
}
