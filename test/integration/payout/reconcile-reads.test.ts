import type { ScheduledEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Payout } from '@shared/domain/payout';
import { REVIEW_GAUGE_EVERY_MINUTES } from '@shared/observability/metric-names';
import { payoutRequestEvent } from '@test/factories/sqs-events';
import { scheduledEvent } from '@test/factories/scheduled-events';
import {
  MERCHANT_ID,
  expectAtMostOneExecution,
  identityOf,
  loadReconciler,
  loadWorker,
  reconcilerContext,
  request,
  startHarness,
  workerContext,
  type Harness,
} from './harness';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
});

describe('reconciler reads only open payouts (sparse index)', () => {
  it('reads the few open payouts among many finished ones, and moves them on', async () => {
    const longAgo = new Date(Date.now() - 3600_000);
    // 120 finished payouts, written the way the worker and reconciler leave them.
    for (let i = 0; i < 120; i++) {
      const p = Payout.accept(
        {
          identity: { platform_merchant_id: MERCHANT_ID, currency: 'GHS', withdrawal_reference: `done-${i}` },
          amount: '1.00',
          accountMasked: '******3456',
          accountCode: 'MTN',
        },
        longAgo,
      );
      const { payout } = await h.repository.createAccepted(p);
      const final =
        i % 3 === 0
          ? payout.reject('name mismatch', longAgo)
          : payout.startVerifying(longAgo).startSubmitting(longAgo).submitted('PENDING', longAgo).succeeded('COMPLETED', longAgo);
      await h.repository.save(payout, final);
    }
    // Three open ones, paid through the real worker and made due now.
    const worker = await loadWorker();
    const open = [request(), request(), request()];
    await worker(payoutRequestEvent(open), workerContext());
    for (const r of open) await h.repository.markDueNow(r.withdrawal_reference, new Date(Date.now() - 1000));

    const reconciler = await loadReconciler();
    const summary = await reconciler(scheduledEvent(), reconcilerContext());
    expect(summary.read).toBe(3);
    expect(summary.scanned).toBe(3);
    expect(summary.transitions).toEqual({ SUCCEEDED: 3 });
    for (const r of open) expect((await h.repository.get(identityOf(r)))?.state).toBe('SUCCEEDED');

    // Now nothing is open: a second run reads nothing at all.
    const again = await reconciler(scheduledEvent(), reconcilerContext());
    expect(again).toMatchObject({ read: 0, scanned: 0, transitions: {} });
    expect((await h.repository.listByState({ state: 'SUCCEEDED', limit: 1000 })).payouts).toHaveLength(80 + 3);
    expectAtMostOneExecution(h.sim);
  });

  it('counts the payouts awaiting review, and reads how long the oldest has waited, on a run the schedule started at the start of a gauge window, not later in it', async () => {
    const now = new Date();
    const p = Payout.accept({ identity: { platform_merchant_id: MERCHANT_ID, currency: 'GHS', withdrawal_reference: 'in-review-1' }, amount: '1.00', accountMasked: '******3456', accountCode: 'MTN' }, now);
    const { payout } = await h.repository.createAccepted(p);
    await h.repository.save(payout, payout.startVerifying(now).startSubmitting(now).submitted('PENDING', now).needsReview('still PENDING', now));
    const reconciler = await loadReconciler();
    // The handler's RECONCILE_EVERY_MINUTES is unset: one-minute runs, so only the first minute of each window counts.
    const windowMs = REVIEW_GAUGE_EVERY_MINUTES * 60_000;
    const windowStart = new Date(Math.floor(now.getTime() / windowMs) * windowMs);
    const counted = await reconciler(scheduledEvent(windowStart), reconcilerContext());
    expect(counted.awaitingReview).toBe(1);
    // Beside the count, how long the one under review has waited: since its hand-over, a moment ago.
    expect(counted.oldestAwaitingReviewSeconds).toBeGreaterThanOrEqual(0);
    expect(counted.oldestAwaitingReviewSeconds).toBeLessThan(60);
    const later = await reconciler(scheduledEvent(new Date(windowStart.getTime() + 2 * 60_000)), reconcilerContext());
    expect(later).not.toHaveProperty('awaitingReview');
    expect(later).not.toHaveProperty('oldestAwaitingReviewSeconds');
    // An invocation without a scheduled time (a test event typed by hand) runs, and does not count.
    expect(await reconciler({} as ScheduledEvent, reconcilerContext())).not.toHaveProperty('awaitingReview');
  });
});
