import { recognizeKycCallback, recognizeOrderNotification, type KycCallbackEvent, type OrderNotificationEvent } from '@shared/domain/callbacks';
import { applyKycEvent, needsConfirmation } from '@shared/domain/kyc-subject';
import { ConcurrentModificationError } from '@shared/domain/errors';
import { METRIC } from '@shared/observability/metric-names';
import type { Clock, Log, Telemetry } from '@shared/ports/runtime';
import type { CallbackListing, EventApplyLog, PayoutNudge, StoredEvent } from '@shared/ports/callbacks';
import type { KycSubjectRef, KycSubjectStore } from '@shared/ports/kyc';
import { applyToCollection, type CollectionProjectionDeps } from './collections';

/*
 * The callback applier: what happens to a stored callback after its 200. The receivers only
 * authenticate, store once and answer; this applies the stored event (a KYC callback to its subject,
 * an order notification to the collection it names and as a nudge to the payout it names) and
 * records that it did. In AWS the events table's stream runs it right after the insert, and a
 * scheduled sweep applies whatever the stream left; locally the sweep alone drives it.
 */

/** What applying a KYC event to the projection needs. */
export interface KycProjectionDeps {
  subjects: KycSubjectStore;
  clock: Clock;
  log: Log;
  telemetry: Telemetry;
}

/** How an event met the projection. */
export type ProjectionOutcome = 'applied' | 'unchanged';

const MAX_APPLY_ATTEMPTS = 5;

/**
 * Applies one recognized KYC event to its subject: read, apply in the domain, conditional write on
 * the version. An event already reflected (a redelivery, a replay) or outranked writes nothing, so
 * applying twice has the effect of applying once and a late event never undoes a later one.
 * @throws ConcurrentModificationError when other writers win every attempt (the event stays stored
 *   and unapplied; the applier's retry or the sweep applies it)
 */
export async function applyKycCallback(
  deps: KycProjectionDeps,
  appId: string,
  event: KycCallbackEvent,
  eventId: string,
): Promise<ProjectionOutcome> {
  const ref = { appId, userReference: event.userReference };
  for (let attempt = 1; attempt <= MAX_APPLY_ATTEMPTS; attempt += 1) {
    const current = await deps.subjects.getSubject(ref);
    const result = applyKycEvent(current, appId, event, eventId, deps.clock.now());
    if (!result.changed) return 'unchanged';
    if (await deps.subjects.saveSubject(result.subject)) {
      const subject = result.subject;
      deps.log.info('KYC subject updated', {
        eventId,
        userReference: ref.userReference,
        phase: subject.phase,
        decision: subject.decision,
        awaitingConfirmation: needsConfirmation(subject),
      });
      if (result.newlyFlagged) {
        deps.telemetry.count(METRIC.kycDecisionChanged);
        deps.log.warn('KYC final decision changed after it was given; applied and flagged', {
          eventId,
          userReference: ref.userReference,
          decisions: subject.finalDecisionsSeen,
          decision: subject.decision,
        });
      }
      return 'applied';
    }
  }
  throw new ConcurrentModificationError(`KYC subject ${ref.userReference} kept changing; event ${eventId} left for the applier's retry`);
}

/** A stored event read again with the current code. */
export type StoredRecognition =
  | { kind: 'kyc'; appId: string; event: KycCallbackEvent }
  | { kind: 'payout-notification'; event: OrderNotificationEvent }
  /** `reason`: why the current code does not recognize the body (what `events replay` reports). */
  | { kind: 'unrecognized'; reason: string }
  /** A KYC event stored without the app it belongs to: nothing to apply it to. */
  | { kind: 'no-app' };

const parsed = (body: string): unknown => {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
};

/** Parses and recognizes a stored body again (the applier and `events replay` both read events so). */
export function recognizeStored(stored: StoredEvent): StoredRecognition {
  if (stored.source === 'payout-notification') {
    const recognition = recognizeOrderNotification(parsed(stored.body));
    return recognition.recognized ? { kind: 'payout-notification', event: recognition.event } : { kind: 'unrecognized', reason: recognition.reason };
  }
  if (stored.appId === undefined) return { kind: 'no-app' };
  const recognition = recognizeKycCallback(parsed(stored.body), new Date(stored.receivedAt));
  return recognition.recognized ? { kind: 'kyc', appId: stored.appId, event: recognition.event } : { kind: 'unrecognized', reason: recognition.reason };
}

/** What applying a stored KYC callback and recording it needs (the applier, and the worker's KYC gate). */
export interface ApplyKycCallbackDeps extends KycProjectionDeps {
  events: EventApplyLog;
}

export interface ApplyCallbackDeps extends ApplyKycCallbackDeps {
  /** The payouts an order notification names are made due for reconciliation now. */
  payouts: PayoutNudge;
  /** The collection an order notification may name (by partner_order_id). */
  collections: CollectionProjectionDeps['collections'];
}

/**
 * `applied`: applied and recorded; `unchanged`: the projection already reflected it (recorded too);
 * `already-applied`: recorded before, nothing done; `not-applied`: never applied (unrecognized).
 */
export type ApplyOutcome = 'applied' | 'unchanged' | 'already-applied' | 'not-applied';

/** A stored event the current code recognizes and can apply. */
type Applicable = Exclude<StoredRecognition, { kind: 'unrecognized' } | { kind: 'no-app' }>;

/** Applies the event to its projections; what it did. */
async function applyRecognized(deps: ApplyCallbackDeps, stored: StoredEvent, recognition: Applicable): Promise<ProjectionOutcome> {
  if (recognition.kind === 'kyc') return applyKycCallback(deps, recognition.appId, recognition.event, stored.eventId);
  const { event } = recognition;
  const collection = await applyToCollection(deps, event, stored.eventId);
  // Due since it arrived: GetPayout decides what happened, the notification is only a hint.
  const payoutsDue = await deps.payouts.markDueNow(event.withdrawalReference, new Date(stored.receivedAt));
  deps.log.info('order notification applied; payout due for reconciliation now', {
    eventId: stored.eventId,
    withdrawalReference: event.withdrawalReference,
    paymentStatus: event.paymentStatus,
    payoutsDue,
    collection,
  });
  return collection === 'applied' || payoutsDue > 0 ? 'applied' : 'unchanged';
}

/**
 * Applies one stored callback to its projection (KYC subject, collection, payout due now), then records it
 * (a conditional write that also takes it out of the not-yet-applied index). Safe to run twice, or
 * concurrently: every projection write is idempotent and guarded, so a second run changes nothing.
 * An unrecognized event is never applied. A recognized event the current code no longer
 * recognizes is left unrecorded, so the sweep keeps reporting it.
 * @throws whatever a projection write throws (the event stays unrecorded and is retried)
 */
export async function applyStoredCallback(deps: ApplyCallbackDeps, stored: StoredEvent): Promise<ApplyOutcome> {
  return applyAndRecord(deps, stored, (recognition) => applyRecognized(deps, stored, recognition));
}

/**
 * applyStoredCallback for a KYC callback, with only what a KYC callback needs: the worker's KYC gate
 * applies a subject's stored callbacks through it before it would refuse a payout. Any other event
 * is left to the applier ('not-applied').
 */
export async function applyStoredKycCallback(deps: ApplyKycCallbackDeps, stored: StoredEvent): Promise<ApplyOutcome> {
  if (stored.source !== 'kyc') return 'not-applied';
  // A stored KYC callback is recognized as `kyc` or not at all, so the fallback is never reached.
  return applyAndRecord(deps, stored, (recognition) =>
    recognition.kind === 'kyc' ? applyKycCallback(deps, recognition.appId, recognition.event, stored.eventId) : Promise.resolve('unchanged'),
  );
}

/** What applying a subject's waiting callbacks needs: their listing by reference besides the apply state. */
export interface ApplyWaitingKycDeps extends ApplyKycCallbackDeps {
  events: EventApplyLog & CallbackListing;
}

/** Callbacks of one subject read per Query page, newest first. */
const SUBJECT_CALLBACKS_PAGE = 25;
/**
 * At most this many of a subject's newest recognized callbacks are looked at. A KYC journey sends a
 * handful; one just stored and not yet applied is among the newest, older ones the applier has long
 * applied. Unrecognized callbacks (listed under the user's reference too, never applied) do not count
 * against it: a burst of them must not push an unapplied recognized one (a rejection) out of the look.
 */
export const SUBJECT_CALLBACKS_READ = 50;
/**
 * At most this many Query pages per look, whatever they hold, so a flood of unrecognized callbacks for
 * one user cannot make the gate read without end. Reaching it before SUBJECT_CALLBACKS_READ
 * recognized ones, with more listed, leaves the look incomplete: SubjectCallbacksUnreadError.
 */
export const SUBJECT_CALLBACKS_PAGES = 20;

/**
 * The look at a subject's stored callbacks stopped at SUBJECT_CALLBACKS_PAGES pages before it had read
 * SUBJECT_CALLBACKS_READ recognized ones: an unapplied callback may be further down, so no answer may
 * rest on the subject (the KYC gate makes it a wait, as any failed look).
 */
export class SubjectCallbacksUnreadError extends Error {
  override name = 'SubjectCallbacksUnreadError';
}

/** Which of a subject's stored callbacks a look at its waiting ones may skip. */
export interface WaitingLookScope {
  /** The callback the subject already reflects (its lastEventId): applied, no need to read it. */
  readonly reflected?: string;
}

/**
 * Applies now the KYC callbacks stored for one subject and not applied yet (store-and-ack: the
 * applier runs after the 200, normally within a second, longer when it fails), oldest first, through
 * the applier's own use case; returns how many it applied. The worker's KYC gate calls it before it
 * answers, so neither an approval nor a refusal rests on a subject that lags the callbacks we hold
 * (a rejection stored while the applier fails, an approval not applied yet).
 * One Query on the `by-reference` index per page, newest first, until SUBJECT_CALLBACKS_READ
 * recognized callbacks are read (unrecognized ones are passed over, not counted) or the listing ends,
 * then one GetItem per listed callback of the subject's app in `scope`, a page's at once: the index
 * holds no apply state.
 * @throws SubjectCallbacksUnreadError when SUBJECT_CALLBACKS_PAGES pages did not reach either; whatever
 *   a read or a projection write throws (nothing is refused on a failed look)
 */
export async function applyWaitingKycCallbacks(deps: ApplyWaitingKycDeps, ref: KycSubjectRef, scope: WaitingLookScope = {}): Promise<number> {
  const waiting: StoredEvent[] = [];
  let recognized = 0;
  let pages = 0;
  let cursor: string | undefined;
  do {
    if (pages === SUBJECT_CALLBACKS_PAGES) {
      deps.log.error('KYC gate: a user\'s stored callbacks were not all looked at (mostly unrecognized ones); no answer rests on the subject until they are fewer', {
        userReference: ref.userReference,
        pages,
        recognized,
      });
      throw new SubjectCallbacksUnreadError(
        `${pages} pages of stored KYC callbacks read for ${ref.userReference} and only ${recognized} recognized among them; more are listed`,
      );
    }
    const page = await deps.events.listCallbacks({ reference: ref.userReference, source: 'kyc', limit: SUBJECT_CALLBACKS_PAGE, cursor });
    pages += 1;
    const inScope = page.events.filter((listed) => listed.recognized && listed.appId === ref.appId && listed.eventId !== scope.reflected);
    // Read at once: a page holds at most 25, and the payout waits for the answer.
    for (const stored of await Promise.all(inScope.map((listed) => deps.events.get(listed.eventId)))) {
      if (stored !== undefined && stored.appliedAt === undefined) waiting.push(stored);
    }
    recognized += page.events.filter((listed) => listed.recognized).length;
    cursor = page.cursor;
  } while (cursor !== undefined && recognized < SUBJECT_CALLBACKS_READ);
  let applied = 0;
  for (const stored of waiting.reverse()) {
    if ((await applyStoredKycCallback(deps, stored)) !== 'not-applied') applied += 1;
  }
  if (waiting.length > 0) {
    deps.log.info('KYC callbacks stored but not yet applied were applied before the KYC gate decided', {
      userReference: ref.userReference,
      waiting: waiting.length,
      applied,
    });
  }
  return applied;
}

/** The apply-and-record steps both entry points share: `project` applies the recognized event to its projections. */
async function applyAndRecord(
  deps: ApplyKycCallbackDeps,
  stored: StoredEvent,
  project: (recognition: Applicable) => Promise<ProjectionOutcome>,
): Promise<ApplyOutcome> {
  if (stored.appliedAt !== undefined) return 'already-applied';
  if (!stored.recognized) return 'not-applied';
  const logKeys = { eventId: stored.eventId, source: stored.source, userReference: stored.userReference, withdrawalReference: stored.withdrawalReference };
  const recognition = recognizeStored(stored);
  if (recognition.kind === 'unrecognized' || recognition.kind === 'no-app') {
    deps.log.error('stored callback was recognized when received but cannot be applied now; left unapplied', { ...logKeys, problem: recognition.kind });
    return 'not-applied';
  }
  const outcome = await project(recognition);
  const now = deps.clock.now();
  if (await deps.events.markApplied(stored.eventId, now)) {
    deps.telemetry.count(METRIC.callbackApplied);
    deps.telemetry.seconds(METRIC.callbackApplyLagSeconds, Math.max(0, now.getTime() - Date.parse(stored.receivedAt)) / 1000);
  }
  return outcome;
}

/**
 * Applies a batch of stored callbacks in order (a stream batch): returns the id of the first one
 * that failed, or undefined. The caller reports it as the batch's failure point, so the stream
 * retries from there (and bisects) while the ones before it stay done.
 */
export async function applyCallbackBatch(deps: ApplyCallbackDeps, batch: ReadonlyArray<{ id: string; event: StoredEvent }>): Promise<string | undefined> {
  for (const { id, event } of batch) {
    try {
      await applyStoredCallback(deps, event);
    } catch (error) {
      deps.log.error('callback not applied; the stream retries it, and the sweep applies it if every retry fails', {
        eventId: event.eventId,
        source: event.source,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
      return id;
    }
  }
  return undefined;
}

export interface SweepSettings {
  /** Events younger than this are left to the stream (0: sweep everything, as the local driver does). */
  graceMs: number;
  /** An event found unapplied older than this is late: counted, logged, alarmed. */
  lateAfterMs: number;
  /** Stop taking new events after this long; the next run goes on. */
  budgetMs: number;
}

/** What one sweep found. */
export interface SweepResult {
  found: number;
  applied: number;
  unchanged: number;
  /** Recorded meanwhile, expired, or not applicable. */
  skipped: number;
  failed: number;
  /** Found older than lateAfterMs. */
  late: number;
}

/**
 * Applies every recognized event stored and left unapplied (the stream's retries all failed, the
 * stream was off, or locally: always), oldest first per shard, so nothing stored is ever lost. A
 * failure is logged and left for the next run. Events found older than `lateAfterMs` are counted
 * (metric CallbacksAppliedLate, which an alarm watches).
 */
export async function sweepUnappliedCallbacks(deps: ApplyCallbackDeps, settings: SweepSettings): Promise<SweepResult> {
  const started = deps.clock.now().getTime();
  const lateBefore = new Date(started - settings.lateAfterMs).toISOString();
  const result: SweepResult = { found: 0, applied: 0, unchanged: 0, skipped: 0, failed: 0, late: 0 };
  for await (const waiting of deps.events.unapplied(new Date(started - settings.graceMs))) {
    if (deps.clock.now().getTime() - started >= settings.budgetMs) break;
    result.found += 1;
    if (waiting.receivedAt < lateBefore) result.late += 1;
    const stored = await deps.events.get(waiting.eventId);
    try {
      const outcome = stored === undefined ? 'not-applied' : await applyStoredCallback(deps, stored);
      if (outcome === 'applied' || outcome === 'unchanged') result[outcome] += 1;
      else result.skipped += 1;
    } catch (error) {
      result.failed += 1;
      deps.log.error('callback not applied by the sweep; the next run retries it', {
        eventId: waiting.eventId,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
    }
  }
  if (result.late > 0) {
    deps.telemetry.count(METRIC.callbacksAppliedLate, result.late);
    deps.log.warn('the sweep found callbacks stored but not applied for longer than expected', { ...result, lateAfterMs: settings.lateAfterMs });
  }
  if (result.found > 0) deps.log.info('callback sweep finished', { ...result });
  return result;
}
