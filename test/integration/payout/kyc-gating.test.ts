import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKycRepository, type KycRepository } from '@shared/adapters/kyc-repository';
import { createKycOrder } from '@shared/app/create-kyc-order';
import type { PayoutRequestInput } from '@shared/messages/payout-request';
import { kycCallbackEvent } from '@test/factories/http-events';
import { payoutRequestEvent } from '@test/factories/sqs-events';
import { scheduledEvent } from '@test/factories/scheduled-events';
import { CALLBACK_TOKEN, startReceiverStack, type ReceiverStack } from '@test/integration/webhooks/receiver-stack';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import type { PayoutRepository } from '@shared/ports/payouts';
import { reconcilerContext, workerContext, type ReconcilerHandler, type WorkerHandler } from './harness';
import { silentLog } from '@test/factories/ports';

/*
 * KYC gating through the real worker module, wired to the receiver's KYC approval reader: a KYC
 * journey played by the simulator posts callbacks through the local gateway, where they are stored
 * and answered; the worker pays only a confirmed approval. Then the provider's order notification
 * makes the payout due, and the reconciler finishes it: the whole flow, one execution.
 *
 * The callback applier is stopped for the whole file: a callback is applied only when a test says
 * so (applyNow) or when the worker's gate applies it, so every payout here meets the race of
 * store-and-ack (callbacks stored, answered 200, not yet applied to the subject) on purpose.
 */

let stack: ReceiverStack;
let worker: WorkerHandler;
let reconciler: ReconcilerHandler;
let payouts: PayoutRepository;
let subjects: KycRepository;

beforeAll(async () => {
  // Payouts settle only when the test says so, so the notification's effect is visible.
  stack = await startReceiverStack({ stage: 'kycgate', simulator: { progression: { settleAfterMs: 3_600_000 } } });
  await stack.applier.stop();
  Object.assign(process.env, {
    KYC_GATING: 'on',
    PAYOUT_API_BASE_URL: stack.sim.payoutBaseUrl,
    KYC_API_BASE_URL: stack.sim.kycBaseUrl,
    PROVIDER_TIMEOUT_MS: '2000',
  });
  worker = ((await import('@functions/payout-worker')) as { handler: WorkerHandler }).handler;
  reconciler = ((await import('@functions/reconciler')) as { handler: ReconcilerHandler }).handler;
  payouts = createPayoutRepository(stack.local.names.payoutsTable, stack.doc);
  subjects = createKycRepository({ tableName: stack.local.names.kycTable, client: stack.doc });
});
afterAll(async () => {
  await stack?.stop();
});

async function kycJourney(reference: string, decision: 'approved' | 'rejected'): Promise<void> {
  const created = await createKycOrder(
    {
      kyc: stack.kycClient,
      orders: createKycRepository({ tableName: stack.local.names.kycTable, client: stack.doc }),
      secret: { get: async () => ({ app_id: stack.appId, callback_token: CALLBACK_TOKEN }) },
      apiBaseUrl: stack.gateway.url,
      clock: { now: () => new Date() },
      log: silentLog,
    },
    { kind: 'individual', reference, full_name: 'Kwame Mensah', email: `${reference}@example.test`, phone: '+233244000000' },
  );
  await stack.sim.admin.advanceKyc({ order_id: created.orderId, action: 'finish', decision });
}

function request(reference: string, userReference: string): PayoutRequestInput {
  return {
    version: 1,
    platform_merchant_id: stack.partner.platform_merchant_id,
    currency: 'GHS',
    withdrawal_reference: reference,
    amount: '40',
    account_number: '0244123456',
    account_code: 'MTN',
    expected_name: 'Kwame Mensah',
    user_reference: userReference,
  };
}

const stateOf = async (r: PayoutRequestInput) => (await payouts.get(r))?.state;
const ledgerOf = (reference: string) => stack.sim.admin.ledger().find((e) => e.withdrawal_reference === reference);
const subjectOf = (userReference: string) => subjects.getSubject({ appId: stack.appId, userReference });
/** The stored KYC callbacks of one user, and whether each was applied. */
const callbacksOf = async (userReference: string) =>
  (await stack.scan(stack.local.names.eventsTable)).filter((e) => e.source === 'kyc' && e.userReference === userReference).map((e) => ({ applied: e.appliedAt !== undefined }));

describe('KYC gating through the worker handler (KYC_GATING=on)', () => {
  it('pays an approved user whose approval is stored but not yet applied, refuses a rejected or unknown one, and reconciles the paid one to SUCCEEDED', async () => {
    await kycJourney('kyc-user-ok', 'approved');
    await kycJourney('kyc-user-no', 'rejected');
    // Stored and answered, not applied: the subjects do not exist yet (the applier is stopped).
    for (const user of ['kyc-user-ok', 'kyc-user-no']) {
      expect(await callbacksOf(user)).toEqual(Array.from({ length: 5 }, () => ({ applied: false })));
      expect(await subjectOf(user)).toBeUndefined();
    }
    const ok = request('kyc-wd-ok', 'kyc-user-ok');
    const no = request('kyc-wd-no', 'kyc-user-no');
    const stranger = request('kyc-wd-stranger', 'kyc-user-never-seen');

    const response = await worker(payoutRequestEvent([ok, no, stranger]), workerContext());
    expect(response.batchItemFailures).toEqual([]);
    expect(await stateOf(ok)).toBe('SUBMITTED');
    for (const r of [no, stranger]) {
      const p = await payouts.get(r);
      expect(p?.state).toBe('REJECTED');
      expect(p?.record.reason).toBe('intent withdrawn before any Payout call: KYC not approved for this user_reference');
      expect(ledgerOf(r.withdrawal_reference)).toBeUndefined();
    }
    // The gate applied each user's stored callbacks (and recorded them) before deciding.
    expect(await subjectOf('kyc-user-ok')).toMatchObject({ decision: 'approved', confirmedAt: expect.any(String) });
    expect(await subjectOf('kyc-user-no')).toMatchObject({ decision: 'rejected' });
    for (const user of ['kyc-user-ok', 'kyc-user-no']) expect((await callbacksOf(user)).every((c) => c.applied)).toBe(true);

    // The simulator settles at once and posts a signed order notification through the gateway; the
    // receiver makes the payout due, and the next reconciler run finishes it.
    const submitted = await payouts.get(ok);
    expect(Date.parse(submitted?.record.nextCheckAt ?? '')).toBeGreaterThan(Date.now());
    await stack.sim.admin.settlePayout(ok, 'succeeded');
    // The notification is stored on its way in; applying it (the stopped applier's job) makes the payout due.
    await expect
      .poll(
        async () => {
          await stack.applyNow();
          return Date.parse((await payouts.get(ok))?.record.nextCheckAt ?? '') <= Date.now();
        },
        { timeout: 5000, interval: 50 },
      )
      .toBe(true);
    const summary = await reconciler(scheduledEvent(), reconcilerContext());
    expect(summary.transitions.SUCCEEDED).toBe(1);
    expect(await stateOf(ok)).toBe('SUCCEEDED');
    expect(ledgerOf(ok.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });
  });

  it('retries, never refuses, a payout whose stored approval cannot be confirmed yet, and pays it once it can', async () => {
    await kycJourney('kyc-user-later', 'approved');
    expect(await subjectOf('kyc-user-later')).toBeUndefined();
    const later = request('kyc-wd-later', 'kyc-user-later');
    const event = payoutRequestEvent([later]);
    stack.sim.admin.setFaults('kycVerificationStatus', { errorRate: 1 });
    try {
      const first = await worker(event, workerContext());
      expect(first.batchItemFailures).toEqual([{ itemIdentifier: event.Records[0]?.messageId }]);
    } finally {
      stack.sim.admin.clearFaults();
    }
    // The intent written beside the verification was released (a retry token): nothing was sent.
    expect(await stateOf(later)).toBe('SUBMITTING');
    expect(ledgerOf(later.withdrawal_reference)).toBeUndefined();
    // The approval was applied on the way (waiting for its confirmation), so the redelivery pays.
    const waiting = await subjectOf('kyc-user-later');
    expect(waiting?.decision).toBe('approved');
    expect(waiting?.confirmedAt).toBeUndefined();
    const second = await worker(payoutRequestEvent([later], { receiveCount: 2 }), workerContext());
    expect(second.batchItemFailures).toEqual([]);
    expect(await stateOf(later)).toBe('SUBMITTED');
    expect(ledgerOf(later.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });
  });

  it('finds an approval not yet applied behind a full page of newer callbacks: the look follows the index pages', async () => {
    await kycJourney('kyc-user-busy', 'approved');
    // 26 distinct "pending" callbacks stored after the journey's: the newest page (25) holds none of its approval.
    for (let n = 0; n < 26; n += 1) {
      const pending = {
        status: 'pending',
        event: 'applicantPending',
        order: 'order-busy',
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(),
        kyc_token: '',
        account: 'acc-busy',
        user_reference: 'kyc-user-busy',
        meta_data: { kyc_note: 'User uploaded required documents', kyc_status: 'awaiting_approval' },
      };
      expect((await stack.kycCallback(kycCallbackEvent(CALLBACK_TOKEN, pending))).statusCode).toBe(200);
    }
    expect(await callbacksOf('kyc-user-busy')).toHaveLength(31);
    const busy = request('kyc-wd-busy', 'kyc-user-busy');
    expect((await worker(payoutRequestEvent([busy]), workerContext())).batchItemFailures).toEqual([]);
    expect(await stateOf(busy)).toBe('SUBMITTED');
    expect(ledgerOf(busy.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });
    expect((await callbacksOf('kyc-user-busy')).every((c) => c.applied)).toBe(true);
  });
  it('refuses once an unapplied rejection is stored, even behind 60 newer unrecognized callbacks of the user (only recognized ones count against the look)', async () => {
    const user = 'kyc-user-buried';
    await kycJourney(user, 'approved');
    const first = request('kyc-wd-buried-1', user);
    expect((await worker(payoutRequestEvent([first]), workerContext())).batchItemFailures).toEqual([]);
    expect(await stateOf(first)).toBe('SUBMITTED');
    const callback = (timestamp: string, meta: Record<string, string>, status = 'completed', event = 'applicantReviewed') => ({
      status,
      event,
      order: 'order-buried',
      timestamp,
      kyc_token: '',
      account: 'acc-buried',
      user_reference: user,
      meta_data: meta,
    });
    // A rejection stored and acknowledged, not applied (the applier is stopped)...
    const rejection = callback(new Date(Date.now() + 1000).toISOString(), { kyc_note: 'Fraud suspected', kyc_status: 'rejected' });
    expect((await stack.kycCallback(kycCallbackEvent(CALLBACK_TOKEN, rejection))).statusCode).toBe(200);
    // ...then 60 authentic callbacks the receiver does not recognize, newer, listed under the user too.
    for (let n = 0; n < 60; n += 1) {
      const unknown = callback(new Date(Date.now() + 2000 + n).toISOString(), { kyc_note: `hold ${n}`, kyc_status: `on_hold_${n}` }, 'pending', 'applicantPending');
      expect((await stack.kycCallback(kycCallbackEvent(CALLBACK_TOKEN, unknown))).statusCode).toBe(200);
    }
    expect(await subjectOf(user)).toMatchObject({ decision: 'approved' });
    const second = request('kyc-wd-buried-2', user);
    expect((await worker(payoutRequestEvent([second]), workerContext())).batchItemFailures).toEqual([]);
    const refused = await payouts.get(second);
    expect(refused?.state).toBe('REJECTED');
    expect(refused?.record.reason).toBe('intent withdrawn before any Payout call: KYC not approved for this user_reference');
    expect(ledgerOf(second.withdrawal_reference)).toBeUndefined();
    expect(await subjectOf(user)).toMatchObject({ decision: 'rejected' });
  });
});
