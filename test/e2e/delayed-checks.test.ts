import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '@local/stack';
import { SUBMITTED_CHECK_SECONDS } from '@shared/domain/payout';
import type { PayoutRepository } from '@shared/ports/payouts';
import { localStackPayouts, type LocalStackPayouts } from '@test/support/local-stack-payouts';
import { untilPayoutState } from '@test/support/payout-state';

/*
 * The delayed checks on the whole local stack (startLocalStack on free ports): the worker sends the
 * first check to the checks queue on fauxqs with DelaySeconds, the stack's second SQS poller hands it
 * to the payout checker after the delay, and the payout is SUCCEEDED without any reconciler run (the
 * scheduler's interval is an hour here) and without an order notification (none is registered).
 */
const MERCHANT = 'local-merchant-1';
let stack: LocalStack;
let repository: PayoutRepository;
let payouts: LocalStackPayouts;

beforeAll(async () => {
  const { startLocalStack } = await import('@local/stack');
  stack = await startLocalStack({
    gatewayPort: 0,
    simulatorPort: 0,
    reconcileEveryMs: 60 * 60_000,
    pollWaitSeconds: 1,
    handlerEnv: { POWERTOOLS_LOG_LEVEL: 'ERROR' },
  });
  payouts = await localStackPayouts(stack);
  repository = payouts.repository;
}, 60_000);
afterAll(async () => {
  payouts?.close();
  await stack?.stop();
});

describe('delayed checks in the local stack', () => {
  it('a submitted payout is checked from the checks queue and final about 10 s after its intent, with no reconciler run', async () => {
    const identity = { platform_merchant_id: MERCHANT, currency: 'GHS', withdrawal_reference: `DELAYED-CHECK-${process.pid}` };
    const request = { version: 1, ...identity, amount: '12.00', account_number: '0244123456', account_code: 'MTN', expected_name: 'Kwame Mensah' };
    await payouts.send(stack.queueUrls.payouts, JSON.stringify(request));
    const payout = await untilPayoutState(repository, identity, 'SUCCEEDED');
    const intent = Date.parse(payout.record.submitIntentAt ?? '');
    const final = Date.parse(payout.record.history.at(-1)?.at ?? '');
    // Not before the first step (SQS held the message), and well before any sweep.
    expect(final - intent).toBeGreaterThanOrEqual((SUBMITTED_CHECK_SECONDS[0] as number) * 1000 - 1000);
    expect(stack.scheduler.stats.runs).toBe(0);
  }, 40_000);
});
