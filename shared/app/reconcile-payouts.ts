import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { toMinorUnits } from '@shared/domain/money';
import { NOTHING_PAID, type Payout, type PayoutState } from '@shared/domain/payout';
import { MAX_CHECK_DELAY_SECONDS, type PayoutCheck } from '@shared/messages/payout-check';
import { METRIC, REVIEW_GAUGE_EVERY_MINUTES } from '@shared/observability/metric-names';
import { countOutcome } from './outcome-metrics';
import { withCredentialRefresh } from './credential-refresh';
import { ConcurrentModificationError, InvalidListCursorError } from '@shared/domain/errors';
import type { Clock, Log, Telemetry } from '@shared/ports/runtime';
import type { CredentialsSource, PayoutCheckQueue, PayoutProvider, PayoutStatusAnswer, PayoutSweepStore, ReversalWatchPosition } from '@shared/ports/payouts';
import { ProviderError } from '@shared/providers/provider-errors';
import { DEFAULT_WATCH_SETTINGS, decideWatched, dueForReversalLook, reversalLookAges, type WatchSettings } from './watch-final-payouts';
import { describeNotices, noticesNaming, type NotificationStore } from './payout-notices';

export interface ReconcileSettings {
  /** How long and how often NEEDS_REVIEW and SUCCEEDED payouts are still asked about (default: WATCH_DEFAULTS). */
  readonly watch?: WatchSettings;
  /** REVIEW_AFTER_MINUTES: an open payout older than this goes to NEEDS_REVIEW. */
  readonly reviewAfterMs: number;
  /**
   * GATEWAY_ERROR_REVIEW_MINUTES: an open payout older than this whose GetPayout answer is a gateway
   * error word (GATEWAY_ERROR and the like: the provider's own pages call them errors) goes to
   * NEEDS_REVIEW without waiting for `reviewAfterMs`. Default GATEWAY_ERROR_REVIEW_MINUTES_DEFAULT.
   */
  readonly gatewayErrorReviewAfterMs?: number;
  /** NOT_FOUND_GRACE_MINUTES: how long "the provider does not know it" must last before acting on it. */
  readonly notFoundGraceMs: number;
  /** RESUBMIT_UNKNOWN_NOT_FOUND: allow one resubmission instead of NEEDS_REVIEW (default false). */
  readonly resubmitUnknownNotFound: boolean;
  /** A SUBMITTING intent younger than this may still have a worker in the Payout call: leave it. */
  readonly submitStaleMs: number;
  /** GetPayout calls in flight at once. */
  readonly concurrency: number;
  readonly pageSize: number;
  /** Stop reading new pages after this long; what is left is due again on the next run. */
  readonly budgetMs: number;
  /**
   * RECONCILE_EVERY_MINUTES: how far apart the scheduled runs are (default one minute), so that
   * exactly one run of each gauge window counts the payouts awaiting review (countsReviewGauge).
   */
  readonly scheduleEveryMs?: number;
  /**
   * The reversal watch's step: it reads the successes whose look has come once this much time has
   * gathered past its watermark, a step at a time (default RECONCILE_DEFAULTS.reversalWatchStepMs).
   */
  readonly reversalWatchStepMs?: number;
}

/** Defaults for the settings that have no environment variable. */
export const RECONCILE_DEFAULTS = {
  submitStaleMs: 5 * 60_000,
  concurrency: 8,
  pageSize: 50,
  budgetMs: 90_000,
  reversalWatchStepMs: 5 * 60_000,
} as const;

/**
 * The budget of one scheduled run: stop taking new pages early enough that the GetPayout calls in
 * flight (each bounded by the provider time-out) finish before the invocation's deadline.
 */
export function runBudgetMs(budgetMs: number, remainingMs: number, providerTimeoutMs: number): number {
  return Math.max(0, Math.min(budgetMs, remainingMs - providerTimeoutMs - 5_000));
}

export interface ReconcileDeps {
  readonly repository: PayoutSweepStore;
  readonly provider: PayoutProvider;
  readonly credentials: CredentialsSource;
  readonly clock: Clock;
  readonly telemetry: Telemetry;
  readonly log: Log;
  readonly settings: ReconcileSettings;
  /**
   * The checks queue. With it, every write that leaves a payout open with its next look due within
   * MAX_CHECK_DELAY_SECONDS also schedules a delayed check for that time; without it only the
   * scheduled sweep looks at payouts.
   */
  readonly checks?: PayoutCheckQueue;
  /**
   * The events table's stored order notifications, read only where "not found for the whole grace
   * period" would decide a payout never acknowledged (FAILED after a refusal, a resubmission, or a
   * review saying the provider does not know it): an authentic notification naming the payout is the
   * provider acknowledging it (rule 1), so none of those is taken and a person looks instead. Never
   * read on any other look. Without it (tests of other paths) GetPayout's answer alone decides.
   */
  readonly notifications?: NotificationStore;
}

/** What one delayed check did. */
export interface PayoutCheckOutcome {
  /**
   * `checked`: decided and written (the next check is scheduled); `stale`: the payout is no longer at
   * the message's version, or is final: someone else took this step, nothing done; `raced`: another
   * writer moved it during the check, nothing written; `missing`: no payout has this identity.
   */
  readonly outcome: 'checked' | 'stale' | 'raced' | 'missing';
  readonly state?: PayoutState;
  /** The payout's next look after the check. */
  readonly nextCheckAt?: string;
}

/** One sweep's options. */
export interface SweepOptions {
  /** Stop reading new pages after this long (default: the settings' budgetMs). */
  readonly budgetMs?: number;
  /**
   * The time the schedule gave the run (the scheduled event's `time`). A run with one may count the
   * payouts awaiting review (countsReviewGauge); a sweep without one (a test, a manual call) does not.
   */
  readonly scheduledAt?: Date;
}

/** The reconciler: the scheduled sweep over the open index, and the delayed check of one payout. */
export interface Reconciler {
  sweep(options?: SweepOptions): Promise<ReconcileSummary>;
  /**
   * One message of the checks queue: the payout is looked at exactly as the sweep would, if it is
   * still at the version the check was scheduled for. A duplicated or late message finds another
   * version and does nothing; two checks of one version race on the conditional write, and only the
   * winner schedules the next check, so checks never multiply.
   * @throws what a failed read or write throws (the queue delivers the message again)
   */
  check(message: PayoutCheck): Promise<PayoutCheckOutcome>;
}

export interface ReconcileSummary {
  /** Payouts read from the sparse index (all open and due). */
  readonly read: number;
  /** SUCCEEDED payouts the reversal watch found at one of their look ages (read from `by-state`). */
  readonly watchRead: number;
  /** Index items the queries examined (ScannedCount): equals `read`, since final payouts are not in the index. */
  readonly scanned: number;
  /** Payouts that changed state, by new state. */
  readonly transitions: Record<string, number>;
  /** Whether due payouts were left for the next run (budget spent). */
  readonly budgetExhausted: boolean;
  /** Set while the provider's Retry-After holds: no GetPayout before this time; due payouts wait for it. */
  readonly providerPausedUntil?: string;
  /**
   * Payouts in NEEDS_REVIEW as the by-state index counted them at the end of the run (the
   * PayoutsAwaitingReview gauge; the index may not show the run's own moves yet): only on a run that
   * counted them, and only when both the count and the read of the oldest succeeded.
   */
  readonly awaitingReview?: number;
  /**
   * Seconds the payout that has waited longest in NEEDS_REVIEW has waited (since its last change, as
   * the by-state index orders them), 0 when none waits: always beside `awaitingReview`, never alone.
   */
  readonly oldestAwaitingReviewSeconds?: number;
}

/** The default spacing of scheduled runs (RECONCILE_EVERY_MINUTES unset): one minute, as deployed by default. */
const SCHEDULE_EVERY_MS_DEFAULT = 60_000;

/**
 * Whether the scheduled run at `scheduledAt` counts the payouts awaiting review: the first run of
 * each REVIEW_GAUGE_EVERY_MINUTES window of the clock (the one less than a schedule interval into
 * it), and every run when runs are that far apart or further. Decided from the run's scheduled time
 * alone, so it needs no stored state; and from the interval, not from "a multiple of 5 minutes",
 * because a rate schedule keeps the phase it was created with: a 5-minute schedule created at :03
 * runs at :08, :13, ... and would never count.
 */
export function countsReviewGauge(scheduledAt: Date, scheduleEveryMs: number): boolean {
  const windowMs = REVIEW_GAUGE_EVERY_MINUTES * 60_000;
  if (scheduleEveryMs >= windowMs) return true;
  const intoWindow = ((scheduledAt.getTime() % windowMs) + windowMs) % windowMs;
  return intoWindow < scheduleEveryMs;
}

/** Minutes an open payout may report a gateway error word before a person looks (2 hours, not 24). */
export const GATEWAY_ERROR_REVIEW_MINUTES_DEFAULT = 120;

/** How often a SUBMITTING whose call was never sent is looked at while its message may still retry. */
const NOT_SENT_RECHECK_MS = 15 * 60_000;

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function mapLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}

/** Whether GetPayout describes a different payout than ours (amount or currency differ). */
function contradicts(payout: Payout, answer: PayoutStatusAnswer): string | undefined {
  const raw = (answer.raw ?? {}) as { amount?: unknown; currency?: unknown };
  const currency = payout.record.identity.currency;
  if (typeof raw.currency === 'string' && raw.currency !== '' && raw.currency !== currency) {
    return `provider reports currency ${raw.currency}, payout is ${currency}`;
  }
  if (typeof raw.amount === 'string' && raw.amount !== '' && payout.record.amount !== '') {
    try {
      if (toMinorUnits(raw.amount, currency) !== toMinorUnits(payout.record.amount, currency)) {
        return `provider reports amount ${raw.amount}, payout is ${payout.record.amount}`;
      }
    } catch {
      return `provider reports an unreadable amount`;
    }
  }
  return undefined;
}

/**
 * The reconciler's scheduled sweep (see createReconciler): read the open payouts that are due from
 * the sparse index, ask GetPayout about each (bounded concurrency), and move them forward; back off
 * the next check; hand what stays open too long, contradicts itself, or is unknown to the provider to
 * NEEDS_REVIEW.
 */
export function createReconcilePayouts(deps: ReconcileDeps): (options?: SweepOptions) => Promise<ReconcileSummary> {
  return createReconciler(deps).sweep;
}

/**
 * A setting's span in a reason: whole minutes as "1440 minutes" (the wording docs and alarms quote),
 * a fraction (a local stack's test settings) in seconds, so "0.5" reads "30 seconds", not "1 minutes".
 */
function spanText(ms: number): string {
  if (ms % 60_000 === 0) return ms === 60_000 ? '1 minute' : `${ms / 60_000} minutes`;
  const seconds = Math.round(ms / 1000);
  return seconds === 1 ? '1 second' : `${seconds} seconds`;
}

/**
 * The reconciler's use cases over one set of ports. The sweep and the delayed checks share one
 * decision and one write path (a conditional write on the state and version read), and the provider's
 * Retry-After pause, which holds for every payout while the function stays warm.
 */
export function createReconciler(deps: ReconcileDeps): Reconciler {
  const { repository, provider, credentials, clock, telemetry, log, settings } = deps;
  /**
   * Until when the provider asked (Retry-After on a GetPayout) to be left alone. It holds for every
   * payout, not only the one that got the answer, and outlives the run while the function stays warm.
   */
  let providerPausedUntil = 0;

  /** GetPayout, or the failure it ended in; a failure with a Retry-After pauses every GetPayout until then. */
  async function askProvider(payout: Payout, now: Date): Promise<{ answer: PayoutStatusAnswer } | { error: Error; notBefore?: Date }> {
    try {
      return { answer: await withCredentialRefresh(credentials, (creds) => provider.getPayout(payout.record.identity, creds)) };
    } catch (error) {
      const retryAfterMs = error instanceof ProviderError ? error.retryAfterMs : undefined;
      if (retryAfterMs === undefined) return { error: error as Error };
      const notBefore = new Date(now.getTime() + retryAfterMs);
      if (notBefore.getTime() > providerPausedUntil) {
        providerPausedUntil = notBefore.getTime();
        log.warn('provider asked to wait (Retry-After); no GetPayout until then', { until: notBefore.toISOString(), retryAfterMs });
      }
      return { error: error as Error, notBefore };
    }
  }

  /**
   * The payout with its look put off, when the provider asked to be left alone (a Retry-After for
   * this payout, or for all of them); undefined when GetPayout may be asked now.
   */
  function waitedFor(payout: Payout, now: Date): Payout | undefined {
    if (now.getTime() < providerPausedUntil) return payout.waitForProvider(new Date(providerPausedUntil), now);
    const own = payout.record.askNotBefore;
    if (own !== undefined && payout.mustWaitForProvider(now)) return payout.waitForProvider(new Date(own), now);
    return undefined;
  }

  /** A watched final payout (NEEDS_REVIEW, SUCCEEDED): ask GetPayout at the watch's low rate. */
  async function decideFinal(payout: Payout, now: Date): Promise<Payout> {
    const asked = await askProvider(payout, now);
    let answer = 'answer' in asked ? asked.answer : undefined;
    if ('error' in asked) {
      log.warn('GetPayout failed for a watched payout; will check again', { payoutKey: payout.key, error: asked.error.name });
    }
    const contradiction = answer?.found ? contradicts(payout, answer) : undefined;
    if (contradiction) {
      log.warn('watched payout: contradictory provider answer ignored', { payoutKey: payout.key, contradiction });
      answer = undefined;
    }
    return decideWatched(payout, answer, now, settings.watch ?? DEFAULT_WATCH_SETTINGS);
  }

  /** Decides the next version of one payout at `now` (at least a recorded check with its next time). */
  async function decide(payout: Payout, now: Date): Promise<Payout> {
    const r = payout.record;
    if (payout.isFinal) return waitedFor(payout, now) ?? decideFinal(payout, now);
    // Nothing paid yet: the deadline counts from acceptance. Paid: from the latest payout call, so a
    // payout paid late on a retry is not sent to review at its first look.
    const overdue = payout.ageMs(now) >= settings.reviewAfterMs;
    const pendingTooLong = payout.sinceLatestIntentMs(now) >= settings.reviewAfterMs;
    const reviewWindow = spanText(settings.reviewAfterMs);

    // Nothing was sent yet: the message owns the payout. If no delivery finishes it in time, a person looks.
    if (payout.state === 'ACCEPTED' || payout.state === 'VERIFYING') {
      if (overdue) return payout.needsReview(`not processed within ${reviewWindow}; ${NOTHING_PAID}`, now);
      return payout.checked(now, { nextCheckAt: new Date(Date.parse(r.createdAt) + settings.reviewAfterMs) });
    }
    // A worker may still be inside the Payout call.
    if (payout.state === 'SUBMITTING' && !r.submitRetryAllowed && r.submitIntentAt) {
      const staleAt = Date.parse(r.submitIntentAt) + settings.submitStaleMs;
      if (now.getTime() < staleAt) return payout.checked(now, { nextCheckAt: new Date(staleAt) });
    }

    // SUBMITTING (stale, or with a not-sent token), SUBMITTED, UNKNOWN: GetPayout decides.
    const waited = waitedFor(payout, now);
    if (waited) return waited;
    const asked = await askProvider(payout, now);
    if ('error' in asked) {
      log.warn('GetPayout failed; will check again', { payoutKey: payout.key, error: asked.error.name });
      if (pendingTooLong) {
        // An intent released as unsent (the one-time retry token): no call went out, whatever GetPayout says.
        if (payout.state === 'SUBMITTING' && r.submitRetryAllowed) return payout.needsReview(`not processed within ${reviewWindow}; ${NOTHING_PAID}`, now);
        return payout.needsReview(`still open after ${reviewWindow}; status unavailable`, now);
      }
      return payout.checked(now, asked.notBefore ? { notBefore: asked.notBefore } : {});
    }
    const { answer } = asked;

    if (answer.found) {
      const contradiction = contradicts(payout, answer);
      if (contradiction) return payout.needsReview(`contradictory provider answer: ${contradiction}`, now);
      const status = answer.status ?? '';
      if (answer.outcome === 'succeeded') return payout.succeeded(status, now);
      if (answer.outcome === 'failed') {
        return payout.failed(`provider reports ${status}`, now, status);
      }
      if (answer.outcome === 'reversed') {
        return payout.succeeded(status, now).reversed(`provider reports ${status}: the delivered money came back`, now, status);
      }
      // Any other record shows the provider holds the reference: the not-found run ends (rule 1).
      if (answer.outcome === 'unrecognized') {
        log.warn('unrecognized provider status; not final', { payoutKey: payout.key, providerStatus: status });
      }
      const held = payout.heldByProvider(status, now);
      if (pendingTooLong) return held.needsReview(`still ${status || 'open'} after ${reviewWindow}`, now);
      if (answer.outcome === 'gateway_error') {
        // Not final, never success; but the provider calls it an error, so a person looks sooner.
        log.warn('provider reports a gateway error; not final', { payoutKey: payout.key, providerStatus: status });
        const gatewayReviewMs = settings.gatewayErrorReviewAfterMs ?? GATEWAY_ERROR_REVIEW_MINUTES_DEFAULT * 60_000;
        if (payout.sinceLatestIntentMs(now) >= gatewayReviewMs) {
          return held.needsReview(`provider reports ${status} (a gateway error) ${spanText(gatewayReviewMs)} or more after acceptance`, now);
        }
      }
      return held;
    }

    // The provider does not know this withdrawal_reference.
    if (payout.state === 'SUBMITTING' && r.submitRetryAllowed) {
      // Expected: the call was never sent. The message may retry; the review deadline bounds the wait.
      if (overdue) return payout.needsReview(`not processed within ${reviewWindow}; ${NOTHING_PAID}`, now);
      const deadline = Date.parse(r.createdAt) + settings.reviewAfterMs;
      return payout.checked(now, { nextCheckAt: new Date(Math.min(now.getTime() + NOT_SENT_RECHECK_MS, deadline)) });
    }
    const base = (
      payout.state === 'SUBMITTING' ? payout.unknown('worker stopped after writing the payout intent', now) : payout
    ).notFound(now);
    // The grace period counts from the start of the current unbroken not-found run.
    if (base.notFoundForMs(now) < settings.notFoundGraceMs) return base;
    const grace = spanText(settings.notFoundGraceMs);
    if (!base.acknowledged && deps.notifications) {
      // Rule 1: any record of the provider's naming the reference is an acknowledgement, a signed
      // notification too. Read only here, where "not found" is about to decide.
      const notified = await notificationsNaming(deps.notifications, base);
      if (notified === undefined) {
        if (pendingTooLong) {
          return base.needsReview(`provider does not know this withdrawal_reference after ${grace}, and the stored order notifications naming it could not be read`, now);
        }
        // A resubmission already authorized stays spendable only while nothing may show the provider
        // knows the payout: a notification stored since the grant cannot be ruled out now.
        if (base.record.resubmitAuthorized) {
          return base.needsReview(
            `resubmission authorized, but the stored order notifications naming this withdrawal_reference could not be read to confirm the provider still does not know it`,
            now,
          );
        }
        return base;
      }
      if (notified !== '') {
        return base.needsReview(
          `contradictory provider answers: GetPayout has not known this withdrawal_reference for ${grace} since ${base.record.notFoundSince}, but ${notified}, so it could still be delivered`,
          now,
        );
      }
    }
    if (base.acknowledged) {
      const since = base.record.acknowledgedAt ? ` at ${base.record.acknowledgedAt}` : '';
      return base.needsReview(
        `contradictory provider answers: the provider acknowledged this reference${since}, and has not known it for ${grace} since ${base.record.notFoundSince}`,
        now,
      );
    }
    if (base.record.refusedAt !== undefined) {
      return base.failed(`refused; the provider does not hold it (not found for ${grace} after the refusal)`, now);
    }
    if (base.record.resubmitAuthorized) {
      if (overdue) return base.needsReview(`resubmission authorized but not done within ${reviewWindow}`, now);
      return base;
    }
    if (settings.resubmitUnknownNotFound) {
      log.warn('provider does not know this payout; one resubmission authorized: enqueue the original request again', {
        payoutKey: payout.key,
        withdrawalReference: r.identity.withdrawal_reference,
      });
      return base.authorizeResubmit(now, settings.notFoundGraceMs);
    }
    return base.needsReview(
      `provider does not know this withdrawal_reference after ${grace} (resubmission disabled)`,
      now,
    );
  }

  /**
   * The stored notifications naming a payout as a clause of its review reason: '' when none counts,
   * undefined when the events table could not be read (no decision may rest on "not found" then).
   */
  async function notificationsNaming(store: NotificationStore, payout: Payout): Promise<string | undefined> {
    try {
      return describeNotices(await noticesNaming(store, payout.record.identity, payout.record.createdAt)) ?? '';
    } catch (error) {
      log.warn('stored order notifications could not be read; "not found" decides nothing this look', { payoutKey: payout.key, error: (error as Error).name });
      return undefined;
    }
  }

  /** Asks for the next delayed check of a payout left open, when it is due soon enough for a message. */
  async function scheduleNextCheck(saved: Payout, now: Date): Promise<void> {
    const at = saved.record.nextCheckAt;
    if (!deps.checks || saved.isFinal || at === undefined) return;
    const delaySeconds = Math.max(0, (Date.parse(at) - now.getTime()) / 1000);
    if (delaySeconds > MAX_CHECK_DELAY_SECONDS) return;
    try {
      await deps.checks.schedule(saved.record.identity, saved.version, delaySeconds);
    } catch (error) {
      // Only time is lost: the payout stays in the open index, and the sweep looks at it when due.
      log.warn('next check not scheduled; the scheduled sweep will look at the payout', { payoutKey: saved.key, error: (error as Error).name });
    }
  }

  /**
   * Whether `next`, decided from `payout`, rests on GetPayout showing that the provider holds the
   * reference where `payout` did not know it yet (first acknowledgement, or the end of a not-found run).
   */
  function showsProviderHolds(payout: Payout, next: Payout): boolean {
    const newly = payout.record.acknowledgedAt === undefined || payout.record.notFoundSince !== undefined;
    return newly && next.record.acknowledgedAt !== undefined && next.record.notFoundSince === undefined;
  }

  /**
   * After a lost race: the provider's answer that it holds the reference is carried to the fresh
   * version, as the worker's outcome is (saveOutcome). The sweep and a delayed check may read the same
   * version and ask GetPayout side by side; if the writer that won recorded "not found", dropping the
   * other's "PENDING" would leave the not-found run unbroken, and a refused payout FAILED (or an
   * ambiguous one resubmitted) while the provider holds it (rule 1). Only after the same Payout call:
   * open in UNKNOWN or SUBMITTED, the acknowledgement moves it on as any look would; FAILED (the
   * winner's "not found" ended the run) stays FAILED with the acknowledgement noted (heldAfterFailed).
   */
  async function carryHeld(payout: Payout, next: Payout): Promise<void> {
    const fresh = await repository.get(payout.record.identity);
    if (!fresh || fresh.record.submitAttempts !== payout.record.submitAttempts) return;
    const status = next.record.providerStatus ?? '';
    let carried: Payout;
    // A FAILED from "not found" carries no provider status (a failure word would be kept as one).
    if (fresh.state === 'FAILED' && fresh.record.acknowledgedAt === undefined && !fresh.record.providerStatus) {
      // The racing look made it FAILED on its "not found": FAILED stays, the acknowledgement is noted
      // so that no retry pays it again while GetPayout does not know it (retryPayout).
      carried = fresh.heldAfterFailed(status, clock.now());
      log.error('provider holds a payout a concurrent look has just made FAILED; acknowledgement recorded, settle it with the provider', {
        payoutKey: fresh.key,
        providerStatus: status,
      });
      // A person must look, as for a payout handed to review: the PayoutNeedsReview alarm.
      telemetry.count(METRIC.payoutNeedsReview);
    } else if (fresh.state === 'NEEDS_REVIEW' && fresh.record.acknowledgedAt === undefined) {
      // The winner handed it to review on its "not found": the review keeps the acknowledgement.
      carried = fresh.checked(clock.now(), { ...(fresh.record.nextCheckAt ? { nextCheckAt: new Date(fresh.record.nextCheckAt) } : {}), providerHolds: status });
    } else if ((fresh.state === 'UNKNOWN' || fresh.state === 'SUBMITTED') && showsProviderHolds(fresh, next)) {
      carried = fresh.heldByProvider(status, clock.now());
    } else return;
    try {
      await repository.save(fresh, carried);
      log.info('provider holds the payout: carried to the version a racing writer stored', { payoutKey: fresh.key, state: fresh.state });
    } catch (error) {
      if (!(error instanceof ConcurrentModificationError)) throw error;
      // Moved again meanwhile: the next look asks GetPayout again before any decision rests on "not found".
      log.warn('provider holds the payout: not carried, moved again meanwhile', { payoutKey: fresh.key });
    }
  }

  /**
   * Decides and writes the next version of one payout, then schedules its next check. Undefined when
   * another writer moved the payout first (the write changed nothing; that writer carries it on,
   * plus this look's evidence that the provider holds the payout: carryHeld).
   */
  async function step(payout: Payout, now: Date): Promise<Payout | undefined> {
    const next = await decide(payout, now);
    // A look by age that found nothing new: nothing to write.
    if (next === payout) return payout;
    try {
      await repository.save(payout, next);
    } catch (error) {
      if (!(error instanceof ConcurrentModificationError)) throw error;
      if (showsProviderHolds(payout, next)) await carryHeld(payout, next);
      return undefined;
    }
    if (next.state !== payout.state) {
      countOutcome(telemetry, next);
      log.info('payout transition', { payoutKey: next.key, from: payout.state, to: next.state, reason: next.record.reason });
    }
    await scheduleNextCheck(next, clock.now());
    return next;
  }

  async function check(message: PayoutCheck): Promise<PayoutCheckOutcome> {
    const { platform_merchant_id, currency, withdrawal_reference } = message;
    const payout = await repository.get({ platform_merchant_id, currency, withdrawal_reference });
    if (!payout) return { outcome: 'missing' };
    if (payout.version !== message.payoutVersion || payout.isFinal) return { outcome: 'stale', state: payout.state };
    const next = await step(payout, clock.now());
    if (!next) return { outcome: 'raced', state: payout.state };
    return { outcome: 'checked', state: next.state, ...(next.record.nextCheckAt ? { nextCheckAt: next.record.nextCheckAt } : {}) };
  }

  /** The reversal watch's position as this instance last read or stored it: a warm function reads it only once a step has gathered. */
  let knownWatch: ReversalWatchPosition | undefined;

  /**
   * The reversal watch: a SUCCEEDED payout is looked at a day, two days, ... after its last change
   * (reversalLookAges), found in `by-state` by that change's time, so nothing is written to schedule
   * a look. A stored watermark says up to when the looks are done; once `reversalWatchStepMs` has
   * gathered past it, a run reads, for every age, the successes whose look falls between the mark and
   * now, then moves the mark. A run that runs out of budget (or meets the provider's Retry-After)
   * stores where it got to, and the next run carries on from there; runs that missed time catch up
   * on their own. No look is skipped; a look is repeated only when a run stops between its GetPayout
   * and storing the mark (a GetPayout, never a write). Returns how many successes were read;
   * `moved` hears of each one that changed state (REVERSED).
   */
  async function reversalWatch(outOfTime: () => boolean, moved: (to: PayoutState) => void): Promise<number> {
    const stepMs = settings.reversalWatchStepMs ?? RECONCILE_DEFAULTS.reversalWatchStepMs;
    const watch = settings.watch ?? DEFAULT_WATCH_SETTINGS;
    const now = clock.now();
    const gathered = (at: ReversalWatchPosition): boolean => at.pending !== undefined || now.getTime() - at.coveredUntil.getTime() >= stepMs;
    if (knownWatch && !gathered(knownWatch)) return 0;
    const progress = await repository.reversalWatchProgress();
    if (!progress) {
      // The first run: looks due from now on. Successes settled before the watch first ran sit in the
      // open index (WATCH#<n>) with their next look; that look hands them to this watch.
      const start: ReversalWatchPosition = { coveredUntil: now };
      knownWatch = (await repository.saveReversalWatchProgress(undefined, start)) ? start : undefined;
      return 0;
    }
    knownWatch = progress;
    if (!gathered(progress)) return 0;

    const from = progress.coveredUntil;
    const until = progress.pending?.until ?? now;
    let read = 0;
    // A run that catches up can meet one success at several ages: one look covers them.
    const looked = new Set<string>();
    const lookOne = (ageMs: number) => async (identity: PayoutIdentity): Promise<void> => {
      const key = payoutKey(identity);
      if (looked.has(key)) return;
      looked.add(key);
      try {
        const payout = await repository.get(identity);
        if (!payout || !dueForReversalLook(payout, ageMs, watch)) return;
        const next = await step(payout, clock.now());
        if (next && next.state !== payout.state) moved(next.state);
      } catch (error) {
        log.error('reversal watch: looking at a payout failed', { withdrawalReference: identity.withdrawal_reference, error: (error as Error).name });
      }
    };
    /** Every age's looks in [from, until), from where the stored progress left off; where it stopped, or undefined when done. */
    const walk = async (): Promise<{ ageMs: number; cursor?: string } | undefined> => {
      for (const ageMs of reversalLookAges(watch)) {
        if (progress.pending && ageMs < progress.pending.ageMs) continue;
        let cursor = progress.pending?.ageMs === ageMs ? progress.pending.cursor : undefined;
        do {
          if (outOfTime()) return { ageMs, ...(cursor ? { cursor } : {}) };
          const changed = (at?: string) => repository.queryChanged('SUCCEEDED', new Date(from.getTime() - ageMs), new Date(until.getTime() - ageMs), settings.pageSize, at);
          let page;
          try {
            page = await changed(cursor);
          } catch (error) {
            // A stored cursor the store no longer takes (written by another version) would stop the
            // watch on every run: this age is read again from its start (one look per payout, as before).
            if (!(error instanceof InvalidListCursorError) || cursor === undefined) throw error;
            log.warn('reversal watch: stored progress not readable; reading this age again from its start', { ageMs });
            page = await changed(undefined);
          }
          read += page.identities.length;
          await mapLimited(page.identities, settings.concurrency, lookOne(ageMs));
          cursor = page.cursor;
        } while (cursor);
      }
      return undefined;
    };
    const stopped = await walk();
    const next: ReversalWatchPosition = stopped ? { coveredUntil: from, pending: { until, ...stopped } } : { coveredUntil: until };
    // Lost to another run (it moved the mark first): the next run reads where that one got to.
    knownWatch = (await repository.saveReversalWatchProgress(progress, next)) ? next : undefined;
    return read;
  }

  /**
   * The payouts in NEEDS_REVIEW now, or undefined when the count failed: the run goes on, and no
   * figure is published, since a 0 would clear the PayoutsAwaitingReview alarm while payouts wait.
   */
  async function countAwaitingReview(): Promise<number | undefined> {
    try {
      return await repository.countInState('NEEDS_REVIEW');
    } catch (error) {
      log.warn('counting the payouts awaiting review failed; no PayoutsAwaitingReview figure this run', { error: (error as Error).name });
      return undefined;
    }
  }

  /**
   * How long the payout that has waited longest for a person has waited, in seconds, 0 when none
   * waits (the figure that sends the age alarm its OK), or undefined when the read failed: as for the
   * count, no figure then rather than a 0 that would clear the alarm while a payout still waits. Its
   * last change is when it entered NEEDS_REVIEW, since a look that finds nothing new keeps it
   * (Payout.checked and waitForProvider); an item whose looks moved it under an older version reads
   * younger than it is.
   */
  async function oldestAwaitingReviewSeconds(): Promise<number | undefined> {
    try {
      const oldest = await repository.oldestInState('NEEDS_REVIEW');
      if (oldest === undefined) return 0;
      // A writer's clock a moment ahead of this one's is no negative wait.
      return Math.max(0, (clock.now().getTime() - oldest.changedAt.getTime()) / 1000);
    } catch (error) {
      log.warn('reading the oldest payout awaiting review failed; no PayoutsAwaitingReview or OldestPayoutAwaitingReviewSeconds figure this run', { error: (error as Error).name });
      return undefined;
    }
  }

  async function sweep(options: SweepOptions = {}): Promise<ReconcileSummary> {
    const started = clock.now();
    const budgetMs = options.budgetMs ?? settings.budgetMs;
    const outOfTime = (): boolean => clock.now().getTime() - started.getTime() >= budgetMs;
    const paused = (): boolean => clock.now().getTime() < providerPausedUntil;
    const transitions: Record<string, number> = {};
    let read = 0;
    let scanned = 0;
    let maxLagSeconds = 0;
    let oldestUnknownSeconds = 0;
    let cursor: string | undefined;
    let budgetExhausted = false;
    const countMove = (to: PayoutState): void => {
      transitions[to] = (transitions[to] ?? 0) + 1;
    };

    const reconcileOne = async (identity: PayoutIdentity): Promise<void> => {
      try {
        const payout = await repository.get(identity);
        if (!payout || !payout.isWatched) return;
        const now = clock.now();
        if (payout.record.nextCheckAt) {
          maxLagSeconds = Math.max(maxLagSeconds, (now.getTime() - Date.parse(payout.record.nextCheckAt)) / 1000);
        }
        if (payout.state === 'UNKNOWN') oldestUnknownSeconds = Math.max(oldestUnknownSeconds, payout.ageMs(now) / 1000);
        // Undefined: another writer (a worker, a check, a parallel run) moved it first and carries it on.
        const next = await step(payout, now);
        if (next && next.state !== payout.state) countMove(next.state);
      } catch (error) {
        log.error('reconciling a payout failed', { withdrawalReference: identity.withdrawal_reference, error: (error as Error).name });
      }
    };

    do {
      if (outOfTime()) {
        budgetExhausted = true;
        break;
      }
      const page = await repository.queryDue(clock.now(), settings.pageSize, cursor);
      read += page.identities.length;
      scanned += page.scannedCount;
      await mapLimited(page.identities, settings.concurrency, reconcileOne);
      cursor = page.cursor;
      // While the provider asked to wait, the payouts of later pages stay due for a later run.
      if (paused()) break;
    } while (cursor);

    // The reversal watch only once the open payouts are done, and never while the provider asked to wait.
    const watchRead = budgetExhausted || paused() ? 0 : await reversalWatch(() => outOfTime() || paused(), countMove);
    if (outOfTime()) budgetExhausted = true;

    // Counted after the run's own moves, yet not necessarily with them: the by-state index is eventually
    // consistent (a GSI has no consistent read), so a payout this run handed to review or settled may
    // still be counted under its former state, and then shows in the next window's count. A window late
    // is fine for a gauge its alarm reads once per window, and PayoutNeedsReview fires for the hand-over.
    const counting = options.scheduledAt !== undefined && countsReviewGauge(options.scheduledAt, settings.scheduleEveryMs ?? SCHEDULE_EVERY_MS_DEFAULT);
    const counted = counting ? await countAwaitingReview() : undefined;
    const oldestWaitSeconds = counted !== undefined ? await oldestAwaitingReviewSeconds() : undefined;
    // The count and the age are one gauge, published together or not at all: a count published
    // without its age would leave PayoutAwaitingReviewTooLong stuck with no alarm noticing, while a
    // run without both is what PayoutsAwaitingReviewNotCounted watches.
    const awaitingReview = oldestWaitSeconds !== undefined ? counted : undefined;

    telemetry.seconds(METRIC.reconcileLagSeconds, Math.max(0, maxLagSeconds));
    telemetry.seconds(METRIC.oldestUnknownAgeSeconds, oldestUnknownSeconds);
    if (awaitingReview !== undefined) telemetry.count(METRIC.payoutsAwaitingReview, awaitingReview);
    if (oldestWaitSeconds !== undefined) telemetry.seconds(METRIC.oldestPayoutAwaitingReviewSeconds, oldestWaitSeconds);
    // The heartbeat: a run that got here read the index to its end or to its budget.
    telemetry.count(METRIC.reconcileRunCompleted);
    const pause = paused() ? { providerPausedUntil: new Date(providerPausedUntil).toISOString() } : {};
    return {
      read,
      watchRead,
      scanned,
      transitions,
      budgetExhausted,
      ...pause,
      ...(awaitingReview !== undefined ? { awaitingReview } : {}),
      ...(oldestWaitSeconds !== undefined ? { oldestAwaitingReviewSeconds: oldestWaitSeconds } : {}),
    };
  }

  return { sweep, check };
}
