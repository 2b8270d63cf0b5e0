import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DemoResult } from '@cli/demo-scenario';
import type { LocalStack } from '@local/stack';

/*
 * The newcomer's path, end to end: the whole local stack started programmatically (free ports),
 * then the demo scenario through it. Real parts only: dynalite, fauxqs, the secrets stand-in, the
 * simulator over HTTP, the gateway, the SQS poller and the scheduler invoking the real handlers.
 */
describe('local stack + demo scenario', () => {
  let stack: LocalStack;
  let result: DemoResult;

  beforeAll(async () => {
    const { startLocalStack } = await import('@local/stack');
    stack = await startLocalStack({ gatewayPort: 0, simulatorPort: 0, reconcileEveryMs: 1000, pollWaitSeconds: 1 });
    const { runDemo } = await import('@cli/demo-scenario');
    result = await runDemo({ kind: 'local', label: 'e2e stack', env: stack.env, urls: stack.urls }, () => {}, { timeoutMs: 90_000, pollMs: 500 });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it('completes the KYC journey through callbacks to the gateway, and the approval is confirmed by pull', () => {
    expect(result.kyc.phase).toBe('completed');
    expect(result.kyc.decision).toBe('approved');
    expect(result.kyc.confirmed).toBe(true);
  });

  it('creates one collection order at the provider and follows its order notification to COMPLETED / PAID', () => {
    expect(result.collection).toMatchObject({ amount: '75.00', currency: 'GHS', orderStatus: 'COMPLETED', paymentStatus: 'PAID' });
    const orders = stack.simulator?.admin.collectionOrders() ?? [];
    expect(orders.filter((o) => o.partner_order_id === result.collection.orderId)).toEqual([
      expect.objectContaining({ status: 'COMPLETED', payment_status: 'PAID', amount: '75.00' }),
    ]);
  });

  it('ends 48 payouts SUCCEEDED (the timed-out one after reconciliation) and 2 REJECTED', () => {
    expect(result.payouts).toHaveLength(50);
    expect(result.counts).toEqual({ SUCCEEDED: 48, REJECTED: 2 });
    const byRole = (role: string) => result.payouts.filter((p) => p.role === role);
    expect(byRole('ambiguous time-out').map((p) => p.state)).toEqual(['SUCCEEDED']);
    expect(byRole('name mismatch')[0]?.reason).toMatch(/name mismatch/);
    expect(byRole('unknown account')[0]?.reason).toMatch(/account/);
    expect(result.allAsExpected).toBe(true);
  });

  it('executes every payout at most once at the provider, and the rejected ones never', () => {
    const ledger = stack.simulator?.admin.ledger() ?? [];
    const demo = new Map(ledger.filter((e) => e.withdrawal_reference.startsWith(`DEMO-${result.runId}-`)).map((e) => [e.withdrawal_reference, e]));
    for (const entry of demo.values()) expect(entry.executions).toBeLessThanOrEqual(1);
    for (const p of result.payouts) {
      expect(demo.get(p.withdrawal_reference)?.executions ?? 0).toBe(p.state === 'SUCCEEDED' ? 1 : 0);
    }
    const timedOut = result.payouts.find((p) => p.role === 'ambiguous time-out');
    expect(demo.get(timedOut?.withdrawal_reference ?? '')?.executions).toBe(1);
  });

  it('leaves nothing in the dead-letter queue', async () => {
    const { GetQueueAttributesCommand } = await import('@aws-sdk/client-sqs');
    const sqsClient = (await import('@shared/adapters/sqs-client')).sqsClient();
    const out = await sqsClient.send(
      new GetQueueAttributesCommand({ QueueUrl: stack.queueUrls.deadLetter, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    expect(out.Attributes?.ApproximateNumberOfMessages).toBe('0');
  });
});
