import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { METRIC } from '@shared/observability/metric-names';
import { metrics } from '@shared/observability/metrics';
import { credentialsFromSecret, PayoutServiceClient } from '@shared/providers/payout-client';
import { withSignature } from '@shared/signing';
import { payoutNotificationEvent } from '@test/factories/http-events';
import { bodyOf, startReceiverStack, type ReceiverStack } from './receiver-stack';
import { payoutInState } from '@test/factories/ports';

let stack: ReceiverStack;
let payoutClient: PayoutServiceClient;

beforeAll(async () => {
  // Payouts stay PENDING at the provider: notifications are sent explicitly by each test.
  stack = await startReceiverStack({ stage: 'notif', simulator: { notifyOnSettle: false, progression: { settleAfterMs: 3_600_000 } } });
  payoutClient = new PayoutServiceClient({ baseUrl: stack.sim.payoutBaseUrl, timeoutMs: 5000 });
});

afterAll(async () => {
  payoutClient?.close();
  await stack?.stop();
});

const identity = (reference: string): PayoutIdentity => ({
  platform_merchant_id: stack.partner.platform_merchant_id,
  currency: 'GHS',
  withdrawal_reference: reference,
});

/** A payout payrelay knows (ACCEPTED, first check a minute away) and the provider has executed. */
async function openPayout(reference: string, credentials = stack.partner): Promise<void> {
  const repo = createPayoutRepository(stack.local.names.payoutsTable, stack.doc);
  await repo.createAccepted(payoutInState('ACCEPTED', identity(reference)));
  await payoutClient.payout(
    { amount: '10.00', account_number: '0244123456', account_code: 'MTN', currency: 'GHS', withdrawal_reference: reference },
    credentialsFromSecret(credentials),
  );
}

async function payoutItem(reference: string): Promise<Record<string, unknown> | undefined> {
  const out = await stack.doc.send(new GetCommand({ TableName: stack.local.names.payoutsTable, Key: { pk: payoutKey(identity(reference)) } }));
  return out.Item;
}

async function storedNotifications(): Promise<Array<Record<string, unknown>>> {
  return (await stack.scan(stack.local.names.eventsTable)).filter((e) => e.source === 'payout-notification');
}

/** The body of the simulator's last notification, as it was signed. */
function lastNotificationBody(): Record<string, unknown> {
  const last = stack.sim.admin.notifications().at(-1);
  return structuredClone(last?.body) as Record<string, unknown>;
}

describe('order notifications signed by the simulator', () => {
  // First in the file: the refresh after a mismatch is throttled, and later tests send forgeries.
  it('re-reads the provider secret once after a key reset, then accepts the new keys', async () => {
    await openPayout('W-warm');
    await openPayout('W-reset');
    // The receiver caches the old keys while they are valid...
    expect((await stack.sim.admin.sendOrderNotification(identity('W-warm'))).map((d) => d.status)).toEqual([200]);
    const fresh = stack.sim.admin.resetPartnerKeys('P-notif');
    await stack.putProviderSecret(fresh);
    // ...and the first notification signed with the new ones makes it re-read the secret.
    const deliveries = await stack.sim.admin.sendOrderNotification(identity('W-reset'));
    expect(deliveries.map((d) => d.status)).toEqual([200]);
    stack.partner = { ...stack.partner, ...fresh };
  });

  it('stores the notification and makes its payout due for reconciliation now, never paid', async () => {
    await openPayout('W-100');
    const before = await payoutItem('W-100');
    const sent = Date.now();
    const deliveries = await stack.sim.admin.sendOrderNotification({ ...identity('W-100'), payment_status: 'PAID', order_status: 'COMPLETED' });
    expect(deliveries.map((d) => d.status)).toEqual([200]);
    // The 200 came after the store alone; the callback applier nudges the payout after it.
    await stack.applyNow();

    const after = await payoutItem('W-100');
    expect(Date.parse(String(after?.nextCheckAt))).toBeLessThan(Date.parse(String(before?.nextCheckAt)));
    expect(Date.parse(String(after?.nextCheckAt))).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(String(after?.nextCheckAt))).toBeGreaterThanOrEqual(sent - 1000);
    expect(after?.state).toBe(before?.state);
    expect(after?.version).toBe(before?.version);

    const stored = (await storedNotifications()).filter((e) => e.withdrawalReference === 'W-100');
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ recognized: true, receivedShard: expect.stringMatching(/^\d{4}-\d{2}-\d{2}#[0-7]$/), appliedAt: expect.any(String) });
    expect(stored[0]?.applyShard).toBeUndefined();
    expect(JSON.parse(String(stored[0]?.body))).toEqual(deliveries[0]?.body);
  });

  it('acknowledges a duplicated delivery and stores it once', async () => {
    await openPayout('W-dup');
    stack.sim.admin.setFaults('orderNotification', { duplicateRate: 1 });
    try {
      const deliveries = await stack.sim.admin.sendOrderNotification(identity('W-dup'));
      expect(deliveries.map((d) => d.status)).toEqual([200, 200]);
    } finally {
      stack.sim.admin.clearFaults();
    }
    expect((await storedNotifications()).filter((e) => e.withdrawalReference === 'W-dup')).toHaveLength(1);
  });

  it('accepts the public key with or without the Bearer prefix', async () => {
    await openPayout('W-bearer');
    await stack.sim.admin.sendOrderNotification(identity('W-bearer'));
    // withSignature signs the body without its old signature field and replaces it.
    const signed = withSignature({ ...lastNotificationBody(), message: 'again' }, 'orderNotification', {
      partnerSecret: stack.partner.partner_secret_key,
      merchantSecret: stack.partner.merchant_secret_key,
    });
    const result = await stack.payoutNotification(payoutNotificationEvent(signed, `Bearer ${stack.partner.partner_public_key}`));
    expect(result.statusCode).toBe(200);
  });

  it('stores an authentic notification that names no payout, flagged unrecognized, and answers 200', async () => {
    const count = vi.spyOn(metrics, 'addMetric');
    const body = withSignature({ status: 'success', message: 'Order notification', data: { payment: { status: 'PAID' } } }, 'orderNotification', {
      partnerSecret: stack.partner.partner_secret_key,
      merchantSecret: stack.partner.merchant_secret_key,
    });
    const result = await stack.payoutNotification(payoutNotificationEvent(body, stack.partner.partner_public_key));
    expect(result.statusCode).toBe(200);
    const stored = (await storedNotifications()).find((e) => e.pk === bodyOf(result).eventId);
    expect(stored).toMatchObject({ recognized: false, unrecognizedReason: expect.stringContaining('withdrawal_reference') });
    expect(count).toHaveBeenCalledWith(METRIC.webhookUnrecognized, 'Count', 1);
    count.mockRestore();
  });
});

describe('order notification refusals (401, nothing stored)', () => {
  async function expectRefused(event: ReturnType<typeof payoutNotificationEvent>, status = 401): Promise<void> {
    const before = (await storedNotifications()).length;
    const result = await stack.payoutNotification(event);
    expect(result.statusCode).toBe(status);
    expect((await storedNotifications()).length).toBe(before);
  }

  it('refuses a tampered notification', async () => {
    await openPayout('W-tamper');
    await stack.sim.admin.sendOrderNotification(identity('W-tamper'));
    // The genuine notification's own effect (the nudge of the payout) first, so only the tampered copy's can show.
    await stack.applyNow();
    const body = lastNotificationBody();
    (body.data as { payment: { status: string } }).payment.status = 'PAID';
    (body.data as { withdrawal_reference: string }).withdrawal_reference = 'W-other';
    const before = await payoutItem('W-tamper');
    await expectRefused(payoutNotificationEvent(body, stack.partner.partner_public_key));
    expect((await payoutItem('W-tamper'))?.nextCheckAt).toBe(before?.nextCheckAt);
  });

  it('refuses a notification signed with the wrong key', async () => {
    const forged = withSignature(lastNotificationBody(), 'orderNotification', { partnerSecret: 'not-the-partner-secret', merchantSecret: stack.partner.merchant_secret_key });
    await expectRefused(payoutNotificationEvent(forged, stack.partner.partner_public_key));
  });

  it('refuses a correctly signed notification with a wrong or missing Authorization key, and counts each', async () => {
    const count = vi.spyOn(metrics, 'addMetric');
    const body = lastNotificationBody();
    await expectRefused(payoutNotificationEvent(body, 'Bearer someone-elses-public-key'));
    await expectRefused(payoutNotificationEvent(body, undefined));
    expect(count.mock.calls.filter(([name]) => name === METRIC.webhookUnauthorized)).toHaveLength(2);
    count.mockRestore();
  });

  it('refuses a notification without a signature (400: nothing to check)', async () => {
    const { signature: _signature, ...unsigned } = lastNotificationBody();
    await expectRefused(payoutNotificationEvent(unsigned, stack.partner.partner_public_key), 400);
  });

  it('answers 400 to JSON that is not an object, 413/415/400 to transport problems, never 5xx', async () => {
    await expectRefused(payoutNotificationEvent('[1,2]', stack.partner.partner_public_key), 400);
    await expectRefused(payoutNotificationEvent({ pad: 'x'.repeat(270_000) }, stack.partner.partner_public_key), 413);
    await expectRefused(
      payoutNotificationEvent('a=1', stack.partner.partner_public_key, { headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
    );
    await expectRefused(payoutNotificationEvent('{"data":', stack.partner.partner_public_key), 400);
    for (const weird of ['null', '1', '"s"', '{}', '{"signature":5}', '{"signature":"","data":{"withdrawal_reference":7}}']) {
      const result = await stack.payoutNotification(payoutNotificationEvent(weird, stack.partner.partner_public_key));
      expect(result.statusCode).toBeGreaterThanOrEqual(400);
      expect(result.statusCode).toBeLessThan(500);
    }
  });
});
