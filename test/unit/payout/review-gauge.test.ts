import { describe, expect, it } from 'vitest';
import { countsReviewGauge, createReconciler, RECONCILE_DEFAULTS, type ReconcileSettings } from '@shared/app/reconcile-payouts';
import type { PayoutIdentity } from '@shared/domain/identity';
import type { PayoutState } from '@shared/domain/payout';
import { METRIC, REVIEW_GAUGE_EVERY_MINUTES } from '@shared/observability/metric-names';
import type { PayoutProvider, PayoutRepository } from '@shared/ports/payouts';
import type { Log, Telemetry } from '@shared/ports/runtime';
import { MovableClock, payoutInState, type BuildableState } from '@test/factories/ports';
import { memoryRepository } from '@test/property/memory-repository';

/*
 * The PayoutsAwaitingReview gauge of the reconciler's sweep: a run that counts publishes how many
 * payouts are in NEEDS_REVIEW (0 included, which clears the alarm); a count that fails publishes
 * nothing and the run goes on; and only the first scheduled run of each gauge window counts, whatever
 * phase the rate schedule has. Beside the count, the same run publishes how long the oldest of those
 * payouts has waited (OldestPayoutAwaitingReviewSeconds), only when its count was published.
 */

const MINUTE = 60_000;
const WINDOW_MS = REVIEW_GAUGE_EVERY_MINUTES * MINUTE;
const t0 = new Date('2026-05-04T12:00:00.000Z');

const SETTINGS: ReconcileSettings = {
  ...RECONCILE_DEFAULTS,
  reviewAfterMs: 1440 * MINUTE,
  notFoundGraceMs: 15 * MINUTE,
  resubmitUnknownNotFound: false,
};

/** GetPayout always fails here: the open payouts of these tests are checked and stay open, or go to review past the deadline. */
const noProvider: PayoutProvider = {
  verifyAccount: () => Promise.reject(new Error('not expected')),
  payout: () => Promise.reject(new Error('not expected')),
  getPayout: () => Promise.reject(new Error('not expected')),
};

/** Telemetry that keeps every published value in order, so a gauge's 0 is told from no figure at all. */
function recordingTelemetry(): Telemetry & { readonly published: Array<[string, number]>; values(metric: string): number[] } {
  const published: Array<[string, number]> = [];
  return {
    published,
    values: (metric) => published.filter(([name]) => name === metric).map(([, value]) => value),
    count: (metric, value = 1) => void published.push([metric, value]),
    seconds: (metric, value) => void published.push([metric, value]),
  };
}

function recordingLog(): Log & { readonly warnings: Array<{ message: string; fields?: Record<string, unknown> }> } {
  const warnings: Array<{ message: string; fields?: Record<string, unknown> }> = [];
  return { warnings, info: () => undefined, warn: (message, fields) => void warnings.push({ message, fields }), error: () => undefined };
}

let counter = 0;
const identity = (): PayoutIdentity => ({ platform_merchant_id: 'm-gauge', currency: 'GHS', withdrawal_reference: `gauge-${++counter}` });

/** A memory repository holding payouts in these states, created at `made` (default: 10 minutes before t0, well inside the review deadline). */
async function storeWith(states: BuildableState[], made = new Date(t0.getTime() - 10 * MINUTE)): Promise<ReturnType<typeof memoryRepository>> {
  const repository = memoryRepository();
  for (const state of states) await repository.createAccepted(payoutInState(state, identity(), made));
  return repository;
}

function reconcilerOver(repository: PayoutRepository, options: { scheduleEveryMs?: number } = {}) {
  const telemetry = recordingTelemetry();
  const log = recordingLog();
  const reconciler = createReconciler({
    repository,
    provider: noProvider,
    credentials: { get: () => Promise.reject(new Error('not expected')) },
    clock: new MovableClock(t0),
    telemetry,
    log,
    settings: { ...SETTINGS, ...options },
  });
  return { reconciler, telemetry, log };
}

/** The repository with its count watched: each call's state, and an optional failure. */
function watchedCounts(repository: PayoutRepository, failWith?: Error): PayoutRepository & { readonly counted: PayoutState[] } {
  const counted: PayoutState[] = [];
  return {
    ...repository,
    counted,
    countInState: async (state) => {
      counted.push(state);
      if (failWith) throw failWith;
      return repository.countInState(state);
    },
  };
}

/** The repository with its oldest-in-state read watched: each call's state, and an optional failure. */
function watchedOldest(repository: PayoutRepository, failWith?: Error): PayoutRepository & { readonly asked: PayoutState[] } {
  const asked: PayoutState[] = [];
  return {
    ...repository,
    asked,
    oldestInState: async (state) => {
      asked.push(state);
      if (failWith) throw failWith;
      return repository.oldestInState(state);
    },
  };
}

class IndexThrottledError extends Error {
  override name = 'IndexThrottledError';
}

describe('the PayoutsAwaitingReview gauge', () => {
  it('publishes how many payouts are in NEEDS_REVIEW, and nothing else counts towards it', async () => {
    const repository = await storeWith(['NEEDS_REVIEW', 'NEEDS_REVIEW', 'SUCCEEDED', 'FAILED', 'UNKNOWN', 'NEEDS_REVIEW', 'SUCCEEDED']);
    const { reconciler, telemetry } = reconcilerOver(repository);
    const summary = await reconciler.sweep({ scheduledAt: t0 });
    expect(telemetry.values(METRIC.payoutsAwaitingReview)).toEqual([3]);
    expect(summary.awaitingReview).toBe(3);
    expect(telemetry.values(METRIC.reconcileRunCompleted)).toEqual([1]);
  });

  it('counts after the run\'s moves: a payout the run itself handed to review is in the figure where the store shows it at once', async () => {
    // The memory store is consistent; the deployed by-state index is not, and may show the hand-over
    // only at the next window's count. What this holds is the order: the count comes after the moves.
    // Open for a day with its GetPayout failing (the credentials cannot be read): past the review deadline.
    const repository = await storeWith(['SUBMITTED'], new Date(t0.getTime() - 1440 * MINUTE));
    const { reconciler, telemetry } = reconcilerOver(repository);
    const summary = await reconciler.sweep({ scheduledAt: t0 });
    expect(summary.transitions).toEqual({ NEEDS_REVIEW: 1 });
    expect(telemetry.values(METRIC.payoutsAwaitingReview)).toEqual([1]);
  });

  it('publishes 0 when no payout waits: the figure that sends the alarm its OK', async () => {
    const repository = await storeWith(['SUCCEEDED', 'FAILED']);
    const { reconciler, telemetry } = reconcilerOver(repository);
    const summary = await reconciler.sweep({ scheduledAt: t0 });
    expect(telemetry.values(METRIC.payoutsAwaitingReview)).toEqual([0]);
    expect(summary.awaitingReview).toBe(0);
  });

  it('publishes nothing (never 0) when the count fails, logs its error name, and still finishes the run', async () => {
    class IndexUnavailableError extends Error {
      override name = 'IndexUnavailableError';
    }
    const repository = watchedCounts(await storeWith(['NEEDS_REVIEW']), new IndexUnavailableError('throttled'));
    const { reconciler, telemetry, log } = reconcilerOver(repository);
    const summary = await reconciler.sweep({ scheduledAt: t0 });
    expect(repository.counted).toEqual(['NEEDS_REVIEW']);
    expect(telemetry.values(METRIC.payoutsAwaitingReview)).toEqual([]);
    expect(summary).not.toHaveProperty('awaitingReview');
    // The run itself is whole: its heartbeat and its other figures are published.
    expect(telemetry.values(METRIC.reconcileRunCompleted)).toEqual([1]);
    expect(telemetry.values(METRIC.oldestUnknownAgeSeconds)).toHaveLength(1);
    expect(log.warnings).toEqual([
      { message: expect.stringContaining('counting the payouts awaiting review failed'), fields: { error: 'IndexUnavailableError' } },
    ]);
  });

  it('counts only on the first scheduled run of each window: 3 of 15 one-minute runs, none without a scheduled time', async () => {
    const repository = watchedCounts(await storeWith(['NEEDS_REVIEW']));
    const { reconciler, telemetry } = reconcilerOver(repository, { scheduleEveryMs: MINUTE });
    const counting: string[] = [];
    for (let k = 0; k < 15; k += 1) {
      const scheduledAt = new Date(t0.getTime() + k * MINUTE);
      if ((await reconciler.sweep({ scheduledAt })).awaitingReview !== undefined) counting.push(scheduledAt.toISOString().slice(11, 16));
    }
    expect(counting).toEqual(['12:00', '12:05', '12:10']);
    expect(repository.counted).toHaveLength(3);
    expect(telemetry.values(METRIC.payoutsAwaitingReview)).toEqual([1, 1, 1]);
    // A sweep the schedule did not start (a test, a call by hand) never counts.
    await reconciler.sweep();
    expect(repository.counted).toHaveLength(3);
  });

  it('counts once per window whatever phase a rate schedule has, and on every run of a schedule 5 minutes apart or more', () => {
    /** The counting runs of `runs` runs every `everyMs` from `start`, as minutes past t0 (seconds as a fraction). */
    const countingRuns = (start: Date, everyMs: number, runs: number): number[] =>
      Array.from({ length: runs }, (_, k) => new Date(start.getTime() + k * everyMs))
        .filter((at) => countsReviewGauge(at, everyMs))
        .map((at) => (at.getTime() - t0.getTime()) / MINUTE);
    const windowsOf = (minutes: number[]): number[] => minutes.map((m) => Math.floor((m * MINUTE) / WINDOW_MS));
    // Every 2 minutes from 12:03:17: one run per 5-minute window, in every window the runs cover.
    const twoMinutes = countingRuns(new Date(t0.getTime() + 3 * MINUTE + 17_000), 2 * MINUTE, 30);
    expect(windowsOf(twoMinutes)).toEqual(Array.from({ length: 12 }, (_, w) => w + 1));
    // Every 3 minutes from 12:01: likewise.
    expect(windowsOf(countingRuns(new Date(t0.getTime() + MINUTE), 3 * MINUTE, 20))).toEqual(Array.from({ length: 12 }, (_, w) => w));
    // Every 5 minutes from 12:03 (never on a multiple of 5 minutes): every run counts.
    expect(countingRuns(new Date(t0.getTime() + 3 * MINUTE), 5 * MINUTE, 6)).toEqual([3, 8, 13, 18, 23, 28]);
    // Every hour: every run counts.
    expect(countingRuns(new Date(t0.getTime() + 7 * MINUTE), 60 * MINUTE, 3)).toEqual([7, 67, 127]);
  });
});

describe('the age of the oldest payout awaiting review (OldestPayoutAwaitingReviewSeconds)', () => {
  const HOUR = 60 * MINUTE;

  it('publishes the seconds since the oldest NEEDS_REVIEW payout was handed over, whatever older payouts of other states there are', async () => {
    const repository = memoryRepository();
    // Handed to review 5 and 30 hours ago; a success and a failure older still do not count, nor does
    // an UNKNOWN payout (2 hours: within the review deadline, so this run leaves it UNKNOWN).
    for (const [state, hoursAgo] of [['NEEDS_REVIEW', 5], ['NEEDS_REVIEW', 30], ['SUCCEEDED', 100], ['FAILED', 200], ['UNKNOWN', 2]] as const) {
      await repository.createAccepted(payoutInState(state, identity(), new Date(t0.getTime() - hoursAgo * HOUR)));
    }
    const { reconciler, telemetry } = reconcilerOver(repository);
    const summary = await reconciler.sweep({ scheduledAt: t0 });
    expect(telemetry.values(METRIC.oldestPayoutAwaitingReviewSeconds)).toEqual([30 * 3600]);
    expect(summary.oldestAwaitingReviewSeconds).toBe(30 * 3600);
    expect(telemetry.values(METRIC.payoutsAwaitingReview)).toEqual([2]);
  });

  it("counts from the hand-over even after the run's own look at the payout: a watch look that finds nothing new keeps its last change", async () => {
    const repository = memoryRepository();
    const waiting = payoutInState('NEEDS_REVIEW', identity(), new Date(t0.getTime() - 30 * HOUR));
    await repository.createAccepted(waiting);
    // The memory store's due query holds open payouts only; the deployed one also holds the payouts
    // under review watch (WATCH#<n>), which is what brings this one to the run's look.
    const withWatch: PayoutRepository = {
      ...repository,
      queryDue: async (now) => {
        const identities = [...repository.items.values()].filter((p) => p.isWatched && (p.record.nextCheckAt ?? '') <= now.toISOString()).map((p) => p.record.identity);
        return { identities, scannedCount: identities.length };
      },
    };
    const { reconciler, telemetry } = reconcilerOver(withWatch);
    await reconciler.sweep({ scheduledAt: t0 });
    // The hourly watch looked at it (GetPayout could not be asked) and wrote the next look.
    const looked = await repository.get(waiting.record.identity);
    expect(looked?.version).toBeGreaterThan(waiting.version);
    expect(looked?.state).toBe('NEEDS_REVIEW');
    expect(telemetry.values(METRIC.oldestPayoutAwaitingReviewSeconds)).toEqual([30 * 3600]);
  });

  it('publishes 0 when no payout waits: the figure that sends the age alarm its OK', async () => {
    const repository = watchedOldest(await storeWith(['SUCCEEDED', 'FAILED', 'UNKNOWN']));
    const { reconciler, telemetry } = reconcilerOver(repository);
    const summary = await reconciler.sweep({ scheduledAt: t0 });
    expect(repository.asked).toEqual(['NEEDS_REVIEW']);
    expect(telemetry.values(METRIC.oldestPayoutAwaitingReviewSeconds)).toEqual([0]);
    expect(summary.oldestAwaitingReviewSeconds).toBe(0);
  });

  it('publishes neither figure (never 0) when the age read fails, logs the error name, and finishes the run', async () => {
    const repository = watchedOldest(await storeWith(['NEEDS_REVIEW']), new IndexThrottledError('throttled'));
    const { reconciler, telemetry, log } = reconcilerOver(repository);
    const summary = await reconciler.sweep({ scheduledAt: t0 });
    expect(repository.asked).toEqual(['NEEDS_REVIEW']);
    expect(telemetry.values(METRIC.oldestPayoutAwaitingReviewSeconds)).toEqual([]);
    expect(summary).not.toHaveProperty('oldestAwaitingReviewSeconds');
    // A count alone would leave the age alarm stuck unseen; without both, PayoutsAwaitingReviewNotCounted sees the run.
    expect(telemetry.values(METRIC.payoutsAwaitingReview)).toEqual([]);
    expect(summary).not.toHaveProperty('awaitingReview');
    expect(telemetry.values(METRIC.reconcileRunCompleted)).toEqual([1]);
    expect(log.warnings).toEqual([
      { message: expect.stringContaining('reading the oldest payout awaiting review failed'), fields: { error: 'IndexThrottledError' } },
    ]);
  });

  it('is not read, nor published, when the count failed (the two figures of a window go together), and comes back with the next count', async () => {
    const stored = await storeWith(['NEEDS_REVIEW']);
    let countFails = true;
    const repository = watchedOldest({
      ...stored,
      countInState: async (state) => {
        if (countFails) throw new IndexThrottledError('throttled');
        return stored.countInState(state);
      },
    });
    const { reconciler, telemetry } = reconcilerOver(repository, { scheduleEveryMs: MINUTE });
    const failed = await reconciler.sweep({ scheduledAt: t0 });
    expect(repository.asked).toEqual([]);
    expect(telemetry.values(METRIC.oldestPayoutAwaitingReviewSeconds)).toEqual([]);
    expect(failed).not.toHaveProperty('oldestAwaitingReviewSeconds');
    // The next window's count succeeds: both figures again.
    countFails = false;
    const next = await reconciler.sweep({ scheduledAt: new Date(t0.getTime() + WINDOW_MS) });
    expect(repository.asked).toEqual(['NEEDS_REVIEW']);
    expect(next).toMatchObject({ awaitingReview: 1, oldestAwaitingReviewSeconds: 600 });
  });

  it('is read only by the run that counts: 3 of 15 one-minute runs, none without a scheduled time', async () => {
    const repository = watchedOldest(await storeWith(['NEEDS_REVIEW']));
    const { reconciler, telemetry } = reconcilerOver(repository, { scheduleEveryMs: MINUTE });
    for (let k = 0; k < 15; k += 1) await reconciler.sweep({ scheduledAt: new Date(t0.getTime() + k * MINUTE) });
    expect(repository.asked).toHaveLength(3);
    // Created 10 minutes before t0; the clock of these runs stays at t0.
    expect(telemetry.values(METRIC.oldestPayoutAwaitingReviewSeconds)).toEqual([600, 600, 600]);
    await reconciler.sweep();
    expect(repository.asked).toHaveLength(3);
  });
});
