import { describe, expect, it } from 'vitest';
import { resolvePayout } from '@shared/app/resolve-payout';
import { retryPayout } from '@shared/app/retry-payout';
import type { Payout } from '@shared/domain/payout';
import { acceptRequest, checkPayoutRequest } from '@shared/messages/payout-request';
import type { PayoutProvider, PayoutStatusAnswer } from '@shared/ports/payouts';
import { memoryRepository } from '@test/property/memory-repository';
import { MovableClock, noTelemetry, silentLog, storedNotifications } from '@test/factories/ports';

/*
 * When `payouts retry` may pay a FAILED payout again on GetPayout's "not found", and when
 * `payouts resolve --as failed` may settle one: the legitimate paths pass, and a "not found" that may
 * be a lagging record of an executed payout (a forced FAILED after a call that may have reached the
 * provider, a stored signed notification naming it) is refused.
 */

const AT = new Date('2026-11-24T10:00:00.000Z');
const identity = { platform_merchant_id: 'm-1', currency: 'GHS', withdrawal_reference: 'WD-7' };
const request = (() => {
  const checked = checkPayoutRequest({ version: 1, ...identity, amount: '10.00', account_number: '0244123456', account_code: 'MTN' });
  if (!checked.ok) throw new Error('bad fixture');
  return checked.request;
})();
const NOT_FOUND: PayoutStatusAnswer = { found: false, outcome: 'unrecognized', raw: {} };
const FAILED: PayoutStatusAnswer = { found: true, status: 'FAILED', outcome: 'failed', raw: {} };
const PAID = (eventId: string, data: Record<string, unknown> = {}) => ({
  eventId,
  receivedAt: '2026-11-24T10:05:00.000Z',
  withdrawalReference: identity.withdrawal_reference,
  body: { data: { withdrawal_reference: identity.withdrawal_reference, platform_merchant_id: 'm-1', currency: 'GHS', payment: { status: 'PAID' }, order_details: { status: 'COMPLETED' }, ...data } },
});

/** The payout built by `shape` from ACCEPTED, stored, with a provider answering `answer` and these notifications. */
async function stored(shape: (accepted: Payout, now: Date) => Payout, answer: PayoutStatusAnswer = NOT_FOUND, notices: Parameters<typeof storedNotifications>[0] = []) {
  const clock = new MovableClock(AT);
  const repository = memoryRepository();
  const { payout } = await repository.createAccepted(acceptRequest(request, AT));
  await repository.save(payout, shape(payout, AT));
  const sent: string[] = [];
  const deps = {
    repository,
    provider: { getPayout: async () => answer } as unknown as PayoutProvider,
    credentials: { get: async () => ({ partnerPublicKey: 'p', partnerSecretKey: 's', merchantSecretKey: 'm', partnerId: 'P', platformMerchantId: 'm-1' }) },
    clock,
    log: silentLog,
    telemetry: noTelemetry,
    notifications: storedNotifications(notices),
    queue: { send: async (body: string) => void sent.push(body) },
  };
  const retry = (extra: { force?: boolean; evidence?: string } = {}) =>
    retryPayout(deps, { identity, newReference: 'WD-7-R1', by: 'ama', accountNumber: '0244123456', ...extra });
  return { deps, sent, retry, repository };
}

const audit = (providerAnswer: string) => ({ by: 'ama', evidence: 'ticket 1', providerAnswer });
/** Payout call timed out (may have reached the provider), handed to review. */
const timedOutInReview = (p: Payout, now: Date) => p.startVerifying(now).startSubmitting(now).unknown('time-out', now).needsReview('provider does not know this withdrawal_reference after 15 minutes', now);

describe('retryPayout on "not found"', () => {
  it('refuses a FAILED forced by an operator while a Payout call may have reached the provider; sends nothing', async () => {
    const { retry, sent, repository } = await stored((p, now) =>
      timedOutInReview(p, now).resolveByOperator('FAILED', audit('not found (the provider does not know this reference); overridden with --force'), now),
    );
    await expect(retry()).rejects.toMatchObject({
      name: 'OperatorActionRefusedError',
      forcible: true,
      message: expect.stringMatching(/is FAILED on ama's resolve against the provider's answer .* may have reached the provider.*what settles it is the provider's written confirmation that it never executed/),
    });
    expect(sent).toEqual([]);
    expect((await repository.get(identity))?.record.retriedAs).toBeUndefined();
  });

  it('a forced retry needs evidence, then goes ahead and is recorded on both payouts', async () => {
    const { retry, sent } = await stored((p, now) => timedOutInReview(p, now).resolveByOperator('FAILED', audit('unavailable: down; overridden with --force'), now));
    await expect(retry({ force: true })).rejects.toMatchObject({ name: 'InvalidOperatorInputError' });
    const result = await retry({ force: true, evidence: 'provider letter 12: never executed' });
    expect(result.forced).toBe(true);
    expect(sent).toHaveLength(1);
    expect(result.original.record.history.at(-1)).toMatchObject({ evidence: 'provider letter 12: never executed', reason: expect.stringMatching(/paid twice$/) });
    expect(result.retry.record.history[0]).toMatchObject({ by: 'ama', evidence: 'provider letter 12: never executed', providerAnswer: expect.stringMatching(/overridden with --force$/) });
  });

  it('refuses while a stored signed notification names the payout, even one GetPayout confirmed nothing about', async () => {
    const shape = (p: Payout, now: Date) => p.startVerifying(now).startSubmitting(now).refused('declined', now, { acknowledged: false }).notFound(now).failed('refused; the provider does not hold it', now);
    const { retry, sent } = await stored(shape, NOT_FOUND, [PAID('payout-notification#1', { payment: { status: 'PAID\u001b[2J<b>' } })]);
    await expect(retry()).rejects.toThrow(/^not retried: GetPayout says it does not know WD-7, but the provider's signed order notification received at 2026-11-24T10:05:00.000Z \(payment PAID\?\?2J\?b\?, order COMPLETED\) names it/);
    expect(sent).toEqual([]);
  });

  describe('the legitimate paths still pass', () => {
    it('a FAILED GetPayout confirmed (even after a forced resolve: the provider says failed now)', async () => {
      const { retry, sent } = await stored((p, now) => timedOutInReview(p, now).resolveByOperator('FAILED', audit('PENDING (pending); overridden with --force'), now), FAILED);
      expect((await retry()).forced).toBe(false);
      expect(sent).toHaveLength(1);
    });

    it('a FAILED reached by the rules: refused, then not found for the whole grace period, never acknowledged', async () => {
      const shape = (p: Payout, now: Date) => p.startVerifying(now).startSubmitting(now).refused('declined', now, { acknowledged: false }).notFound(now).failed('refused; the provider does not hold it', now);
      const { retry, sent } = await stored(shape);
      await retry();
      expect(sent).toHaveLength(1);
    });

    it("an operator's unforced resolve on \"not found\" of a payout no call reached", async () => {
      const shape = (p: Payout, now: Date) => p.needsReview('not processed within 60 minutes; nothing was paid', now).resolveByOperator('FAILED', audit('not found (the provider does not know this reference)'), now);
      const { retry, sent } = await stored(shape);
      await retry();
      expect(sent).toHaveLength(1);
    });

    it('a payout whose intent was released as never sent, forced FAILED while the provider could not be asked', async () => {
      const shape = (p: Payout, now: Date) =>
        p.startVerifying(now).startSubmitting(now).submitNotSent(now, 'unavailable').needsReview('not processed within 60 minutes; nothing was paid', now).resolveByOperator('FAILED', audit('unavailable: down; overridden with --force'), now);
      const { retry, sent } = await stored(shape);
      await retry();
      expect(sent).toHaveLength(1);
    });

    it('a notification naming the reference for another merchant does not count', async () => {
      const shape = (p: Payout, now: Date) => p.startVerifying(now).startSubmitting(now).refused('declined', now, { acknowledged: false }).notFound(now).failed('refused; the provider does not hold it', now);
      const { retry, sent } = await stored(shape, NOT_FOUND, [PAID('payout-notification#2', { platform_merchant_id: 'm-2' })]);
      await retry();
      expect(sent).toHaveLength(1);
    });
  });

  it('a REVERSED or SUCCEEDED payout: send a new payout request under a new withdrawal_reference', async () => {
    const { retry } = await stored((p, now) => p.startVerifying(now).startSubmitting(now).submitted('PENDING', now).succeeded('COMPLETED', now).reversed('returned', now));
    await expect(retry()).rejects.toThrow(/is REVERSED: .* send a new payout request under a new withdrawal_reference$/);
  });
});

describe('resolvePayout --as failed on "not found"', () => {
  it('is refused when a stored signed notification names the payout, naming it, even for a payout no call may have reached', async () => {
    const shape = (p: Payout, now: Date) => p.needsReview('not processed within 60 minutes; nothing was paid', now);
    const { deps } = await stored(shape, NOT_FOUND, [PAID('payout-notification#3')]);
    await expect(resolvePayout(deps, { identity, as: 'failed', by: 'ama', evidence: 'x' })).rejects.toMatchObject({
      forcible: true,
      message: expect.stringMatching(/^not resolved: GetPayout says it does not know it, but the provider's signed order notification received at 2026-11-24T10:05:00.000Z \(payment PAID, order COMPLETED\) names it/),
    });
    // Without the notification the same payout resolves (nothing may have reached the provider).
    const { deps: clean } = await stored(shape);
    expect((await resolvePayout(clean, { identity, as: 'failed', by: 'ama', evidence: 'x' })).forced).toBe(false);
  });
});
