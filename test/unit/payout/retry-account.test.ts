import { describe, expect, it } from 'vitest';
import { retryPayout } from '@shared/app/retry-payout';
import { acceptRequest, checkPayoutRequest } from '@shared/messages/payout-request';
import type { PayoutProvider, PayoutStatusAnswer } from '@shared/ports/payouts';
import { memoryRepository } from '@test/property/memory-repository';
import { MovableClock, noTelemetry, silentLog, storedNotifications, testFingerprints } from '@test/factories/ports';

const request = (() => {
  const checked = checkPayoutRequest({
    version: 1,
    platform_merchant_id: 'm-1',
    currency: 'GHS',
    withdrawal_reference: 'WD-9',
    amount: '10.00',
    account_number: '0244123456',
    account_code: 'MTN',
  });
  if (!checked.ok) throw new Error('bad fixture');
  return checked.request;
})();

/** A FAILED payout (the provider said so) stored with its fingerprint, and a provider whose record names `providerNumber`. */
async function failedPayout(providerNumber: string) {
  const clock = new MovableClock(new Date('2026-11-24T10:00:00.000Z'));
  const repository = memoryRepository();
  const now = clock.now();
  const accepted = acceptRequest(request, now, { accountFingerprint: await testFingerprints.of(request) });
  const { payout } = await repository.createAccepted(accepted);
  const submitted = payout.startVerifying(now).startSubmitting(now).submitted('FAILED', now, 'accepted', undefined).failed('provider reports FAILED', now, 'FAILED');
  await repository.save(payout, submitted);
  const answer: PayoutStatusAnswer = { found: true, status: 'FAILED', outcome: 'failed', raw: { customer: { accountNumber: providerNumber } } };
  const provider = { getPayout: async () => answer } as unknown as PayoutProvider;
  const sent: string[] = [];
  const deps = {
    repository,
    provider,
    credentials: { get: async () => ({ partnerPublicKey: 'p', partnerSecretKey: 's', merchantSecretKey: 'm', partnerId: 'P', platformMerchantId: 'm-1' }) },
    clock,
    log: silentLog,
    telemetry: noTelemetry,
    notifications: storedNotifications(),
    queue: { send: async (body: string) => void sent.push(body) },
    fingerprints: testFingerprints,
  };
  return { deps, sent };
}

describe('retryPayout: the beneficiary\'s full number', () => {
  it("takes the provider's number when it is the account stored", async () => {
    const { deps, sent } = await failedPayout('0244123456');
    await retryPayout(deps, { identity: { platform_merchant_id: 'm-1', currency: 'GHS', withdrawal_reference: 'WD-9' }, newReference: 'WD-9-R', by: 'ama' });
    expect(JSON.parse(sent[0] as string)).toMatchObject({ account_number: '0244123456', withdrawal_reference: 'WD-9-R' });
  });

  it("says so when the provider's number ends the same but is not the account stored, and asks for the number", async () => {
    const { deps, sent } = await failedPayout('233244123456');
    await expect(
      retryPayout(deps, { identity: { platform_merchant_id: 'm-1', currency: 'GHS', withdrawal_reference: 'WD-9' }, newReference: 'WD-9-R', by: 'ama' }),
    ).rejects.toThrow(/the provider's record gives a number ending like it that is not the account stored .*: give the beneficiary's full account number$/);
    expect(sent).toEqual([]);
  });

  it('refuses an operator FAILED resolved on "not found" once the provider was seen holding the payout', async () => {
    const clock = new MovableClock(new Date('2026-11-24T10:00:00.000Z'));
    const repository = memoryRepository();
    const now = clock.now();
    const { payout } = await repository.createAccepted(acceptRequest(request, now));
    const review = payout.startVerifying(now).startSubmitting(now).unknown('time-out', now).needsReview('still open after 1440 minutes; status unavailable', now);
    const resolved = review.resolveByOperator('FAILED', { by: 'ama', evidence: 'provider ticket 9', providerAnswer: 'not found (the provider does not know this reference)' }, now);
    // A racing look saw the provider holding it just then (carryHeld).
    await repository.save(payout, resolved.heldAfterFailed('PENDING', now));
    const notFound: PayoutStatusAnswer = { found: false, outcome: 'unrecognized', raw: {} };
    const sent: string[] = [];
    const deps = {
      repository,
      provider: { getPayout: async () => notFound } as unknown as PayoutProvider,
      credentials: { get: async () => ({ partnerPublicKey: 'p', partnerSecretKey: 's', merchantSecretKey: 'm', partnerId: 'P', platformMerchantId: 'm-1' }) },
      clock,
      log: silentLog,
      telemetry: noTelemetry,
      notifications: storedNotifications(),
      queue: { send: async (body: string) => void sent.push(body) },
    };
    await expect(
      retryPayout(deps, { identity: { platform_merchant_id: 'm-1', currency: 'GHS', withdrawal_reference: 'WD-9' }, newReference: 'WD-9-R', by: 'ama', accountNumber: '0244123456' }),
    ).rejects.toThrow(/acknowledged WD-9 and now says it does not know it/);
    expect(sent).toEqual([]);
  });
});
