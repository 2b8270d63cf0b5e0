import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '@local/stack';
import type { SimulatorHandle } from '@simulator/index';
import { SETTLED_AFTER_REVIEW, type Payout, type PayoutState } from '@shared/domain/payout';
import type { PayoutRepository } from '@shared/ports/payouts';
import { localStackPayouts, type LocalStackPayouts } from '@test/support/local-stack-payouts';
import { untilPayoutState } from '@test/support/payout-state';

/*
 * The NEEDS_REVIEW watch on the whole local stack (startLocalStack on free ports: the simulator over
 * HTTP, dynalite, fauxqs, the gateway, the SQS poller driving the worker, the scheduler driving the
 * reconciler). A payout the provider keeps in progress past the review window goes to NEEDS_REVIEW;
 * later the provider settles it, and the reconciler's low-rate watch, not `payouts resolve`, settles
 * it: "settled by the provider after review". The review window is configured to 3 seconds
 * (REVIEW_AFTER_MINUTES takes a fraction of a minute); nothing here writes a payout by hand.
 */
const REVIEW_AFTER_MINUTES = 0.05;
const MERCHANT = 'local-merchant-1';
let stack: LocalStack;
let sim: SimulatorHandle;
let repository: PayoutRepository;
let payouts: LocalStackPayouts;

const identity = { platform_merchant_id: MERCHANT, currency: 'GHS', withdrawal_reference: `REVIEW-WATCH-${process.pid}` };

const until = (state: PayoutState): Promise<Payout> => untilPayoutState(repository, identity, state);

beforeAll(async () => {
  const { startLocalStack } = await import('@local/stack');
  stack = await startLocalStack({
    gatewayPort: 0,
    simulatorPort: 0,
    reconcileEveryMs: 300,
    pollWaitSeconds: 1,
    // The provider keeps every payout in progress until told otherwise (admin settlePayout).
    simulatorOptions: { progression: { settleAfterChecks: 1_000_000 } },
    handlerEnv: { REVIEW_AFTER_MINUTES: String(REVIEW_AFTER_MINUTES), POWERTOOLS_LOG_LEVEL: 'ERROR' },
  });
  sim = stack.simulator as SimulatorHandle;
  payouts = await localStackPayouts(stack);
  repository = payouts.repository;
}, 60_000);
afterAll(async () => {
  payouts?.close();
  await stack?.stop();
});

describe('NEEDS_REVIEW is watched at a low rate and settled by the provider', () => {
  it('a payout held in progress past the review window goes to review; when the provider settles it, the watch settles it, not a person', async () => {
    const request = { version: 1, ...identity, amount: '12.00', account_number: '0244123456', account_code: 'MTN', expected_name: 'Kwame Mensah' };
    await payouts.send(stack.queueUrls.payouts, JSON.stringify(request));
    const submitted = await until('SUBMITTED');

    // Past the review window the provider reports it still in progress (an order notification, which
    // makes the reconciler look now): a person is asked to look.
    const windowEnds = Date.parse(submitted.record.submitIntentAt ?? submitted.record.createdAt) + REVIEW_AFTER_MINUTES * 60_000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, windowEnds - Date.now() + 200)));
    await sim.admin.sendOrderNotification({ ...identity, order_status: 'PENDING', payment_status: 'PENDING' });
    const review = await until('NEEDS_REVIEW');
    // A fraction of a minute is said in seconds (0.05 minutes: 3 seconds).
    expect(review.record.reason).toBe('still PENDING after 3 seconds');
    // The watch asks again at its low rate: an hour on, not at the open payouts' back-off.
    expect(Date.parse(review.record.nextCheckAt as string) - Date.parse(review.record.updatedAt)).toBeGreaterThanOrEqual(59 * 60_000);

    // The provider settles it later; its notification makes the watch ask GetPayout now.
    sim.admin.settlePayout(identity, 'succeeded');
    const settled = await until('SUCCEEDED');
    const last = settled.record.history.at(-1);
    expect(last).toMatchObject({ from: 'NEEDS_REVIEW', to: 'SUCCEEDED', reason: `${SETTLED_AFTER_REVIEW}: provider reports COMPLETED` });
    // Not an operator's resolve: no one acted, no evidence.
    expect(last).not.toHaveProperty('by');
    expect(last).not.toHaveProperty('evidence');
    expect(settled.record.history.map((h) => h.to)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'SUBMITTED', 'NEEDS_REVIEW', 'SUCCEEDED']);
    // One Payout call in all.
    expect(sim.admin.ledger().find((e) => e.withdrawal_reference === identity.withdrawal_reference)?.executions).toBe(1);
  }, 60_000);
});
