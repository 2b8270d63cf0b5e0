import { describe, expect, it } from 'vitest';
import { IllegalTransitionError, Payout, SETTLED_AFTER_REVIEW } from '@shared/domain/payout';
import { decideWatched, dueForReversalLook, nextWatchCheck, reversalLookAges, watchSettingsFromDays } from '@shared/app/watch-final-payouts';
import type { PayoutStatusAnswer } from '@shared/ports/payouts';
import { payoutInState } from '@test/factories/ports';

const t0 = new Date('2026-01-01T00:00:00.000Z');
const HOUR = 60 * 60_000;
const DAY = 24 * HOUR;
const at = (ms: number): Date => new Date(t0.getTime() + ms);
const settings = watchSettingsFromDays({ reviewHourlyDays: 3, reviewDailyDays: 30, reversalWatchDays: 7 });

const submitted = (): Payout => payoutInState('SUBMITTED', { platform_merchant_id: 'm-1', currency: 'GHS', withdrawal_reference: 'w-1' }, t0);
const review = (): Payout => submitted().needsReview('still PENDING after 1440 minutes', t0);
const answer = (status: string, outcome: PayoutStatusAnswer['outcome']): PayoutStatusAnswer => ({ found: true, status, outcome });

describe('NEEDS_REVIEW is watched', () => {
  it('stays in the reconciler index with a first look an hour later', () => {
    expect(review().record.nextCheckAt).toBe(at(HOUR).toISOString());
    expect(review().isWatched).toBe(true);
  });

  it('keeps the provider\'s "it holds it" on a review that was never acknowledged: a later "not found" is not "never paid"', () => {
    const unknown = payoutInState('UNKNOWN', { platform_merchant_id: 'm-1', currency: 'GHS', withdrawal_reference: 'w-2' }, t0);
    const never = unknown.notFound(t0).needsReview('provider does not know this withdrawal_reference after 15 minutes (resubmission disabled)', t0);
    expect(never.acknowledged).toBe(false);
    const looked = decideWatched(never, answer('PENDING', 'in_progress'), at(HOUR), settings);
    expect(looked.state).toBe('NEEDS_REVIEW');
    expect(looked.acknowledged).toBe(true);
    expect(looked.record).toMatchObject({ providerStatus: 'PENDING', notFoundSince: undefined, updatedAt: never.record.updatedAt });
  });

  it('is asked about hourly for 3 days, daily for 30 more, then leaves the index', () => {
    const p = review();
    expect(nextWatchCheck(p, at(2 * DAY), settings)).toEqual(at(2 * DAY + HOUR));
    expect(nextWatchCheck(p, at(4 * DAY), settings)).toEqual(at(5 * DAY));
    expect(nextWatchCheck(p, at(34 * DAY), settings)).toBeUndefined();
    const ended = decideWatched(p, undefined, at(34 * DAY), settings);
    expect(ended.state).toBe('NEEDS_REVIEW');
    expect(ended.isWatched).toBe(false);
  });

  it('is settled by a later definite answer, with "settled by the provider after review" in history', () => {
    const ok = decideWatched(review(), answer('COMPLETED', 'succeeded'), at(5 * HOUR), settings);
    expect(ok.state).toBe('SUCCEEDED');
    expect(ok.record.history.at(-1)?.reason).toBe(`${SETTLED_AFTER_REVIEW}: provider reports COMPLETED`);
    const ko = decideWatched(review(), answer('FAILED', 'failed'), at(5 * HOUR), settings);
    expect(ko.state).toBe('FAILED');
    expect(ko.record.history.at(-1)?.reason).toBe(`${SETTLED_AFTER_REVIEW}: provider reports FAILED`);
    expect(ko.isWatched).toBe(false);
  });

  it('stays NEEDS_REVIEW on an in-progress, unrecognized or missing answer', () => {
    for (const a of [answer('PENDING', 'in_progress'), answer('ODD', 'unrecognized'), { found: false, outcome: 'unrecognized' } as const, undefined]) {
      const next = decideWatched(review(), a, at(2 * HOUR), settings);
      expect(next.state).toBe('NEEDS_REVIEW');
      expect(next.record.nextCheckAt).toBe(at(3 * HOUR).toISOString());
    }
  });

  it('a look that finds nothing new moves the version, not the last change (listings and counts go by it)', () => {
    const p = review();
    const looked = decideWatched(p, answer('PENDING', 'in_progress'), at(2 * HOUR), settings);
    expect(looked.version).toBe(p.version + 1);
    expect(looked.record.updatedAt).toBe(p.record.updatedAt);
    expect(looked.record.history).toEqual(p.record.history);
    const ended = decideWatched(p, undefined, at(34 * DAY), settings);
    expect(ended.version).toBe(p.version + 1);
    expect(ended.record.updatedAt).toBe(p.record.updatedAt);
    // Nor does the provider's Retry-After on a look: the look is put off, nothing about the payout changed.
    const paused = p.waitForProvider(at(3 * HOUR), at(2 * HOUR));
    expect(paused.version).toBe(p.version + 1);
    expect(paused.record.nextCheckAt).toBe(at(3 * HOUR).toISOString());
    expect(paused.record.updatedAt).toBe(p.record.updatedAt);
    // An open payout's pause is a write like any other: its last change moves.
    expect(submitted().waitForProvider(at(3 * HOUR), at(2 * HOUR)).record.updatedAt).toBe(at(2 * HOUR).toISOString());
  });
});

describe('an operator resolves NEEDS_REVIEW', () => {
  const audit = { by: 'ama@ops', evidence: 'bank statement line 42', providerAnswer: 'PENDING' };

  it('records who, when, the evidence and the provider answer in the history entry', () => {
    const p = review().resolveByOperator('FAILED', audit, at(HOUR));
    expect(p.state).toBe('FAILED');
    expect(p.record.history.at(-1)).toEqual({
      from: 'NEEDS_REVIEW',
      to: 'FAILED',
      at: at(HOUR).toISOString(),
      reason: 'resolved as FAILED by ama@ops: bank statement line 42',
      ...audit,
    });
  });

  it('is refused outside NEEDS_REVIEW', () => {
    expect(() => submitted().resolveByOperator('SUCCEEDED', audit, at(HOUR))).toThrow(IllegalTransitionError);
  });
});

describe('SUCCEEDED is watched for returned money', () => {
  const done = (): Payout => submitted().succeeded('COMPLETED', t0);

  it('moves to REVERSED when GetPayout reports the money came back, and leaves the index', () => {
    const p = decideWatched(done(), answer('REVERSED', 'reversed'), at(DAY), settings);
    expect(p.state).toBe('REVERSED');
    expect(p.record.reason).toBe('provider reports REVERSED: the delivered money came back');
    expect(p.isWatched).toBe(false);
  });

  it('is looked at by age: a day, two days, ... REVERSAL_WATCH_DAYS after the success, with nothing written', () => {
    expect(reversalLookAges(settings)).toEqual([1, 2, 3, 4, 5, 6, 7].map((d) => d * DAY));
    // REVERSAL_WATCH_DAYS 0 still gives the one look a day after the success (as before).
    expect(reversalLookAges(watchSettingsFromDays({ reviewHourlyDays: 3, reviewDailyDays: 30, reversalWatchDays: 0 }))).toEqual([DAY]);
    for (const age of reversalLookAges(settings)) expect(dueForReversalLook(done(), age, settings)).toBe(true);
    // Still delivered: the same version comes back, so the reconciler writes nothing.
    const p = done();
    expect(decideWatched(p, answer('COMPLETED', 'succeeded'), at(DAY), settings)).toBe(p);
  });

  it('a look the index scheduled ends by leaving the index; the ages then count from that write, never past the watch', () => {
    // A notification made it due: the look finds it still delivered, and it leaves the index.
    const nudged = Payout.fromRecord({ ...done().record, nextCheckAt: at(3 * DAY).toISOString() });
    expect(dueForReversalLook(nudged, DAY, settings)).toBe(false);
    const back = decideWatched(nudged, answer('COMPLETED', 'succeeded'), at(3 * DAY), settings);
    expect(back.isWatched).toBe(false);
    expect(back.record.updatedAt).toBe(at(3 * DAY).toISOString());
    // Looks 4 to 7 days after the success still come (1 to 4 days after that write), the 8th does not.
    expect([1, 2, 3, 4, 5].map((d) => dueForReversalLook(back, d * DAY, settings))).toEqual([true, true, true, true, false]);
  });

  it('a look that got no answer is retried through the index a day later while the watch lasts', () => {
    const retried = decideWatched(done(), undefined, at(2 * DAY), settings);
    expect(retried.record.nextCheckAt).toBe(at(3 * DAY).toISOString());
    // The last look: nothing to write (the watch is over), the payout stays as it is.
    const last = done();
    expect(decideWatched(last, undefined, at(7 * DAY), settings)).toBe(last);
  });

  it('only SUCCEEDED payouts get a look by age', () => {
    expect(dueForReversalLook(review(), DAY, settings)).toBe(false);
    expect(dueForReversalLook(done().reversed('returned', at(DAY)), DAY, settings)).toBe(false);
  });

  it('a NEEDS_REVIEW payout whose money already came back goes through SUCCEEDED to REVERSED', () => {
    const p = decideWatched(review(), answer('REFUNDED', 'reversed'), at(HOUR), settings);
    expect(p.record.history.slice(-2).map((h) => h.to)).toEqual(['SUCCEEDED', 'REVERSED']);
  });
});

describe('retry link', () => {
  it('links a FAILED payout to its retry with a history note, and refuses any other state', () => {
    const failed = submitted().failed('provider reports FAILED', t0, 'FAILED');
    const linked = failed.retriedWith('w-2', 'ama@ops', at(HOUR));
    expect(linked.state).toBe('FAILED');
    expect(linked.version).toBe(failed.version + 1);
    expect(linked.record.retriedAs).toBe('w-2');
    expect(linked.record.history.at(-1)).toMatchObject({ from: 'FAILED', to: 'FAILED', reason: 'retried as w-2 by ama@ops', by: 'ama@ops' });
    expect(() => review().retriedWith('w-2', 'ama@ops', at(HOUR))).toThrow(IllegalTransitionError);
  });
});
