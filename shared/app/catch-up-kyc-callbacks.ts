import { dedupeKey, normalizeTimestamp, recognizeKycCallback } from '@shared/domain/callbacks';
import { readKycResponses } from '@shared/domain/kyc-responses';
import { METRIC } from '@shared/observability/metric-names';
import type { EventLookup, EventStore } from '@shared/ports/callbacks';
import type { KycResponsesSource } from '@shared/ports/kyc';
import { applyKycCallback, type KycProjectionDeps } from './apply-callback';
import { storeCallback } from './store-callback';

export interface CatchUpKycDeps extends KycProjectionDeps {
  events: EventStore & EventLookup;
  responses: KycResponsesSource;
  retentionDays: number;
}

export interface CatchUpOptions {
  /** The KYC app whose callbacks are pulled (app_id of the KYC secret). */
  appId: string;
  /** Only callbacks whose own `timestamp` is at or after this time; one without a readable timestamp is always taken. */
  since?: Date;
  /** Count what a catch-up would do; store and apply nothing. */
  dryRun?: boolean;
  /** Called after each callback of the answer, for progress on long answers. */
  onProgress?: (done: number, total: number) => void;
}

/** What one catch-up found. `seen` = alreadyStored + recovered + unrecognized + failed. */
export interface CatchUpResult {
  appId: string;
  dryRun: boolean;
  /** Callbacks in the answer (after `since`). */
  seen: number;
  /** Callbacks in the answer older than `since`: not looked at. */
  beforeSince: number;
  /** Already in the events table (delivered, or recovered by an earlier catch-up): not applied again. */
  alreadyStored: number;
  /** Missed callbacks now stored (marked `via: catch-up`) and applied to their subject (in a dry run: would be). */
  recovered: number;
  /** Missed callbacks payrelay does not recognize: stored verbatim, not applied, as a delivered one would be. */
  unrecognized: number;
  /** Recovered and stored, but the subject kept changing under the write: left for `events replay`. */
  failed: number;
  /** User references with at least one recovered callback. */
  subjects: string[];
}

type Outcome = 'alreadyStored' | 'recovered' | 'unrecognized' | 'failed';

/** The user reference a recognized payload is about, undefined for an unrecognized one. */
function userReferenceOf(payload: Record<string, unknown>, now: Date): string | undefined {
  const recognition = recognizeKycCallback(payload, now);
  return recognition.recognized ? recognition.event.userReference : undefined;
}

/** One payload of the answer through the receiver's path; in a dry run, only the look-up. */
async function catchUpOne(deps: CatchUpKycDeps, appId: string, payload: Record<string, unknown>, dryRun: boolean, seenInRun: Set<string>): Promise<Outcome> {
  const recognition = recognizeKycCallback(payload, deps.clock.now());
  const eventId = dedupeKey('kyc', payload);
  if (dryRun) {
    const missing = !seenInRun.has(eventId) && (await deps.events.get(eventId)) === undefined;
    seenInRun.add(eventId);
    return !missing ? 'alreadyStored' : recognition.recognized ? 'recovered' : 'unrecognized';
  }
  const userReference = recognition.recognized ? recognition.event.userReference : undefined;
  const stored = await storeCallback(deps, {
    source: 'kyc',
    label: 'KYC callback (catch-up)',
    body: JSON.stringify(payload),
    payload,
    recognition,
    via: 'catch-up',
    keys: { appId, userReference },
  });
  if (stored.outcome === 'duplicate') return 'alreadyStored';
  deps.telemetry.count(METRIC.kycCallbacksRecovered);
  if (!recognition.recognized) return 'unrecognized';
  deps.log.warn('KYC callback recovered by catch-up: it had not been delivered', { ...stored.logKeys, event: recognition.event.event });
  try {
    await applyKycCallback(deps, appId, recognition.event, eventId);
    return 'recovered';
  } catch (error) {
    deps.log.error('recovered KYC callback stored but not applied; `payrelay events replay --since 1h` applies it', {
      ...stored.logKeys,
      error: error instanceof Error ? error.message : String(error),
    });
    return 'failed';
  }
}

/**
 * Recovers KYC callbacks that never arrived: pulls everything the KYC service says it sent for the
 * app (`GET /responses`) and feeds each payload through the receiver's own path: the same dedupe
 * key (so a delivered callback is a duplicate), the same recognition, the same store-once write and
 * the same projection with its rank guard. A callback already stored is counted, never applied
 * again, so running it twice recovers nothing the second time.
 * @throws KycResponsesFormatError when the answer cannot be read (checked whole before anything is stored)
 */
export async function catchUpKycCallbacks(deps: CatchUpKycDeps, options: CatchUpOptions): Promise<CatchUpResult> {
  const { appId } = options;
  const payloads = readKycResponses(await deps.responses.getResponses({ app_id: appId }));
  const since = options.since?.toISOString();
  const dryRun = options.dryRun === true;
  const result: CatchUpResult = { appId, dryRun, seen: 0, beforeSince: 0, alreadyStored: 0, recovered: 0, unrecognized: 0, failed: 0, subjects: [] };
  const subjects = new Set<string>();
  const seenInRun = new Set<string>();
  for (const [index, payload] of payloads.entries()) {
    const occurredAt = normalizeTimestamp(payload.timestamp);
    if (since !== undefined && occurredAt !== '' && occurredAt < since) result.beforeSince += 1;
    else {
      result.seen += 1;
      const outcome = await catchUpOne(deps, appId, payload, dryRun, seenInRun);
      result[outcome] += 1;
      const reference = outcome === 'recovered' ? userReferenceOf(payload, deps.clock.now()) : undefined;
      if (reference !== undefined) subjects.add(reference);
    }
    options.onProgress?.(index + 1, payloads.length);
  }
  result.subjects = [...subjects].sort();
  deps.log.info('KYC catch-up finished', { ...result, subjects: result.subjects.length });
  return result;
}
