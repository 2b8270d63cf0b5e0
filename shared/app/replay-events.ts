import { recognizeKycCallback } from '@shared/domain/callbacks';
import { applyKycCallback, type KycProjectionDeps } from './receive-kyc-callback';
import type { EventStore } from '@shared/ports/callbacks';

export interface ReplayEventsDeps extends KycProjectionDeps {
  events: EventStore;
}

export interface ReplayRange {
  since: Date;
  /** Exclusive; defaults to now. */
  until?: Date;
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
  /** Order notifications: hints only, the reconciler owns payouts, so replay leaves them. */
  skipped: number;
}

/** A range that cannot be replayed (e.g. `until` before `since`). */
export class ReplayRangeError extends Error {
  override name = 'ReplayRangeError';
}

/**
 * Re-applies stored KYC callbacks received in [since, until) to their subjects, oldest first.
 * Each stored body is parsed again with the current code, so a payload that was unrecognized when
 * it arrived is applied once the code understands it. Idempotent: applying an event a subject
 * already reflects writes nothing, so a replay over any range leaves correct projections as they are.
 */
export async function replayEvents(deps: ReplayEventsDeps, range: ReplayRange): Promise<ReplayResult> {
  const until = range.until ?? deps.clock.now();
  if (Number.isNaN(range.since.getTime()) || Number.isNaN(until.getTime()) || until <= range.since) {
    throw new ReplayRangeError('replay needs a valid range with until after since');
  }
  const result: ReplayResult = { scanned: 0, applied: 0, unchanged: 0, unrecognized: 0, skipped: 0 };
  for await (const stored of deps.events.receivedBetween(range.since, until)) {
    result.scanned += 1;
    if (stored.source !== 'kyc' || stored.appId === undefined) {
      result.skipped += 1;
      continue;
    }
    let payload: unknown;
    try {
      payload = JSON.parse(stored.body);
    } catch {
      payload = undefined;
    }
    const recognition = recognizeKycCallback(payload);
    if (!recognition.recognized) {
      result.unrecognized += 1;
      continue;
    }
    const outcome = await applyKycCallback(deps, stored.appId, recognition.event, stored.eventId);
    result[outcome] += 1;
  }
  deps.log.info('events replayed', { since: range.since.toISOString(), until: until.toISOString(), ...result });
  return result;
}
