import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPayoutQueue } from '@shared/adapters/payout-queue';
import { createEventStore } from '@shared/adapters/event-store';
import { InvalidOperatorInputError, PayoutNotFoundError } from '@shared/app/operator-errors';
import { createProcessPayout } from '@shared/app/process-payout';
import { credentialsFromCachedSecret } from '@shared/adapters/credentials';
import { createReconcilePayouts } from '@shared/app/reconcile-payouts';
import { resolvePayout } from '@shared/app/resolve-payout';
import { retryPayout } from '@shared/app/retry-payout';
import { SETTLED_AFTER_REVIEW } from '@shared/domain/payout';
import { parsePayoutRequest, payoutRequestSchema, type PayoutRequestInput } from '@shared/messages/payout-request';
import { METRIC } from '@shared/observability/metric-names';
import { PayoutServiceClient } from '@shared/providers/payout-client';
import { MERCHANT_ID, PARTNER_CODE, RECONCILE_SETTINGS, expectAtMostOneExecution, identityOf, ledgerOf, request, startHarness, type Harness } from './harness';
import { MovableClock, countingTelemetry, silentLog, testFingerprints } from '@test/factories/ports';
import { takeAllMessages } from '@test/support/queues';
import * as v from '@shared/validation/valibot';

/*
 * The exceptions an operator settles (NEEDS_REVIEW watched and resolved, retry of a FAILED payout,
 * REVERSED after success) through the real use cases: the repository on dynalite, the provider
 * client against the simulator over HTTP, the payouts queue on fauxqs, and a clock the test moves.
 * The simulator keeps every payout PENDING until the test settles it.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
let h: Harness;
let client: PayoutServiceClient;

const telemetry = countingTelemetry();
const counts = telemetry.counts;

function system() {
  const clock = new MovableClock();
  const credentials = credentialsFromCachedSecret({ get: async () => h.sim.admin.credentials(PARTNER_CODE, MERCHANT_ID) });
  const notifications = createEventStore({ tableName: h.aws.names.eventsTable });
  const deps = { repository: h.repository, credentials, clock, telemetry, log: silentLog, provider: client, notifications };
  const process = createProcessPayout({ ...deps, fingerprints: testFingerprints, settings: { nameMatchThreshold: 0.85, kycGating: false } });
  const reconcile = createReconcilePayouts({ ...deps, settings: RECONCILE_SETTINGS });
  const queue = createPayoutQueue(h.aws.queueUrls.payouts, h.sqs);
  return {
    clock,
    deps,
    queue,
    pay: (r: PayoutRequestInput) => process(v.parse(payoutRequestSchema, r)),
    reconcile: () => reconcile(),
    /** Takes the payout messages off the queue and processes them, as the worker would. */
    async work(): Promise<number> {
      const out = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.aws.queueUrls.payouts, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
      for (const m of out.Messages ?? []) {
        await process(parsePayoutRequest(m.Body ?? ''));
        await h.sqs.send(new DeleteMessageCommand({ QueueUrl: h.aws.queueUrls.payouts, ReceiptHandle: m.ReceiptHandle }));
      }
      return out.Messages?.length ?? 0;
    },
  };
}

const payoutOf = (r: PayoutRequestInput) => h.repository.get(identityOf(r));

/** A payout the provider holds PENDING for longer than REVIEW_AFTER: handed to a person. */
async function inReview(s: ReturnType<typeof system>, r: PayoutRequestInput = request()) {
  expect(await s.pay(r)).toMatchObject({ state: 'SUBMITTED' });
  s.clock.advance(61 * MINUTE);
  await s.reconcile();
  expect((await payoutOf(r))?.state).toBe('NEEDS_REVIEW');
  return r;
}

beforeAll(async () => {
  h = await startHarness({ simulator: { progression: { settleAfterChecks: 1_000_000 } } });
  client = new PayoutServiceClient({ baseUrl: h.sim.payoutBaseUrl, timeoutMs: 800 });
});
afterAll(async () => {
  client?.close();
  await h?.stop();
});
afterEach(() => expectAtMostOneExecution(h.sim));

describe('NEEDS_REVIEW is watched', () => {
  it('a late definite answer from the provider settles it, "settled by the provider after review"', async () => {
    const s = system();
    const r = await inReview(s);
    s.clock.advance(30 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('NEEDS_REVIEW');
    h.sim.admin.settlePayout(identityOf(r), 'succeeded');
    s.clock.advance(31 * MINUTE);
    await s.reconcile();
    const done = await payoutOf(r);
    expect(done?.state).toBe('SUCCEEDED');
    expect(done?.record.history.at(-1)).toMatchObject({ from: 'NEEDS_REVIEW', to: 'SUCCEEDED', reason: `${SETTLED_AFTER_REVIEW}: provider reports COMPLETED` });
  });
});

describe('payouts resolve', () => {
  const audit = { by: 'ama@ops', evidence: 'provider ticket 4711: payout cancelled' };

  it('settles NEEDS_REVIEW as FAILED with who, when, the evidence and the provider answer', async () => {
    const s = system();
    const r = await inReview(s);
    h.sim.admin.settlePayout(identityOf(r), 'failed');
    const result = await resolvePayout(s.deps, { identity: identityOf(r), as: 'failed', ...audit });
    expect(result.forced).toBe(false);
    const p = await payoutOf(r);
    expect(p?.state).toBe('FAILED');
    expect(p?.version).toBe(result.payout.version);
    expect(p?.record.history.at(-1)).toEqual({
      from: 'NEEDS_REVIEW',
      to: 'FAILED',
      at: s.clock.now().toISOString(),
      reason: 'resolved as FAILED by ama@ops: provider ticket 4711: payout cancelled',
      by: 'ama@ops',
      evidence: 'provider ticket 4711: payout cancelled',
      providerAnswer: 'FAILED (failed)',
    });
  });

  it('records the identity that ran it (actor) beside the stated name, in history and in the log line; not twice when they are the same', async () => {
    const s = system();
    const lines: Array<{ message: string; fields?: Record<string, unknown> }> = [];
    const log = { ...silentLog, info: (message: string, fields?: Record<string, unknown>) => void lines.push({ message, ...(fields ? { fields } : {}) }) };
    const actor = 'arn:aws:sts::123456789012:assumed-role/ops/ama';
    const r = await inReview(s);
    h.sim.admin.settlePayout(identityOf(r), 'failed');
    await resolvePayout({ ...s.deps, log }, { identity: identityOf(r), as: 'failed', by: 'alice@finance (not me)', actor, evidence: audit.evidence });
    expect((await payoutOf(r))?.record.history.at(-1)).toEqual({
      from: 'NEEDS_REVIEW',
      to: 'FAILED',
      at: s.clock.now().toISOString(),
      reason: `resolved as FAILED by alice@finance (not me): ${audit.evidence}`,
      by: 'alice@finance (not me)',
      actor,
      evidence: audit.evidence,
      providerAnswer: 'FAILED (failed)',
    });
    expect(lines.find((l) => l.message === 'payout resolved by an operator')?.fields).toMatchObject({ by: 'alice@finance (not me)', actor });

    // No name typed: `by` is the identity itself, recorded once.
    const same = await inReview(s);
    h.sim.admin.settlePayout(identityOf(same), 'failed');
    await resolvePayout({ ...s.deps, log }, { identity: identityOf(same), as: 'failed', by: actor, actor, evidence: audit.evidence });
    const entry = (await payoutOf(same))?.record.history.at(-1);
    expect(entry?.by).toBe(actor);
    expect(entry).not.toHaveProperty('actor');
    expect(lines.at(-1)?.fields).not.toHaveProperty('actor');
  });

  it('refuses --as failed when the provider says delivered, unless forced; the forced entry says so', async () => {
    const s = system();
    const r = await inReview(s);
    h.sim.admin.settlePayout(identityOf(r), 'succeeded');
    await expect(resolvePayout(s.deps, { identity: identityOf(r), as: 'failed', ...audit })).rejects.toMatchObject({
      name: 'OperatorActionRefusedError',
      message: expect.stringMatching(/^not resolved: the provider says COMPLETED: the money was delivered; what settles it is the provider's written confirmation that it never executed/),
      forcible: true,
    });
    expect((await payoutOf(r))?.state).toBe('NEEDS_REVIEW');
    const forced = await resolvePayout(s.deps, { identity: identityOf(r), as: 'failed', ...audit, force: true });
    expect(forced.forced).toBe(true);
    expect((await payoutOf(r))?.record.history.at(-1)?.providerAnswer).toBe('COMPLETED (succeeded); overridden with --force');
  });

  it('refuses --as failed, and then a retry, when the provider acknowledged the payout and now says it does not know it', async () => {
    const s = system();
    const r = await inReview(s);
    expect((await payoutOf(r))?.acknowledged).toBe(true);
    // The provider's read side loses the payout it showed: "not found" is a lagging or lost record.
    h.sim.admin.setFaults('getPayout', { flapRate: 1 });
    try {
      await expect(resolvePayout(s.deps, { identity: identityOf(r), as: 'failed', by: 'ama@ops', evidence: 'customer says not received' })).rejects.toThrow(
        /the provider acknowledged it at .* and now says it does not know it: it could still be delivered; what settles it is the provider's written confirmation that it never executed/,
      );
      expect((await payoutOf(r))?.state).toBe('NEEDS_REVIEW');
      const forced = await resolvePayout(s.deps, { identity: identityOf(r), as: 'failed', by: 'ama@ops', evidence: 'provider ticket 77: lost', force: true });
      expect(forced.forced).toBe(true);
      await expect(retryPayout({ ...s.deps, queue: s.queue }, { identity: identityOf(r), newReference: `${r.withdrawal_reference}-r`, by: 'ama@ops', accountNumber: r.account_number })).rejects.toThrow(
        /acknowledged .* now says it does not know it, so it could still be delivered; what settles it is the provider's written confirmation that it never executed/,
      );
      expect(await s.work()).toBe(0);
    } finally {
      h.sim.admin.clearFaults();
    }
  });

  it('refuses --as failed on "not found" when a Payout call may have reached the provider and its outcome was never known, unless forced', async () => {
    const s = system();
    const r = request();
    // The provider commits the payout and never answers the call: UNKNOWN, never acknowledged.
    h.sim.admin.setFaults('payout', { timeoutRate: 1, times: 1 });
    expect(await s.pay(r)).toMatchObject({ state: 'UNKNOWN' });
    try {
      // GetPayout is down past the review window: handed to a person without the provider ever showing it.
      h.sim.admin.setFaults('getPayout', { errorRate: 1 });
      s.clock.advance(61 * MINUTE);
      await s.reconcile();
      const review = await payoutOf(r);
      expect(review?.record.reason).toMatch(/status unavailable$/);
      expect(review?.acknowledged).toBe(false);
      // Then one "not found": the provider's read side lags behind its commit.
      h.sim.admin.setFaults('getPayout', { lagRate: 1 });
      const refused = await resolvePayout(s.deps, { identity: identityOf(r), as: 'failed', by: 'ama@ops', evidence: 'customer says not received' }).catch((e: unknown) => e);
      expect(refused).toMatchObject({
        name: 'OperatorActionRefusedError',
        forcible: true,
        message: expect.stringMatching(
          /^not resolved: a Payout call for it may have reached the provider \(intent to pay recorded at .+\) and its outcome was never known; "not found" alone does not show it failed/,
        ),
      });
      expect((await payoutOf(r))?.state).toBe('NEEDS_REVIEW');
      // Nothing can pay it again meanwhile: a retry needs a FAILED payout.
      await expect(retryPayout({ ...s.deps, queue: s.queue }, { identity: identityOf(r), newReference: `${r.withdrawal_reference}-r`, by: 'ama@ops', accountNumber: r.account_number })).rejects.toThrow(
        /only a FAILED payout can be retried|is NEEDS_REVIEW/,
      );
      expect(await s.work()).toBe(0);
      expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1 });
      // With the operator's own evidence it can be forced, and the history says so.
      const forced = await resolvePayout(s.deps, { identity: identityOf(r), as: 'failed', by: 'ama@ops', evidence: 'provider ticket 91: never executed', force: true });
      expect(forced.forced).toBe(true);
      expect((await payoutOf(r))?.record.history.at(-1)?.providerAnswer).toMatch(/^not found .*; overridden with --force$/);
    } finally {
      h.sim.admin.clearFaults();
    }
  });

  it('refuses --as succeeded when the provider says failed, still pending, or does not know the payout; --force records the override', async () => {
    const s = system();
    const r = await inReview(s);
    // Still PENDING at the provider (the harness never settles by itself).
    await expect(resolvePayout(s.deps, { identity: identityOf(r), as: 'succeeded', ...audit })).rejects.toThrow(/the provider still holds it as PENDING: it is not delivered yet/);
    h.sim.admin.settlePayout(identityOf(r), 'failed');
    await expect(resolvePayout(s.deps, { identity: identityOf(r), as: 'succeeded', ...audit })).rejects.toThrow(/: the payout failed/);
    // Never sent: the provider does not know it.
    const never = request();
    h.sim.admin.setFaults('accountVerification', { errorRate: 1 });
    try {
      await s.pay(never).catch(() => undefined);
      for (let i = 0; i < 3 && (await payoutOf(never))?.state !== 'NEEDS_REVIEW'; i++) {
        s.clock.advance(61 * MINUTE);
        await s.reconcile();
      }
    } finally {
      h.sim.admin.clearFaults();
    }
    expect((await payoutOf(never))?.state).toBe('NEEDS_REVIEW');
    await expect(resolvePayout(s.deps, { identity: identityOf(never), as: 'succeeded', ...audit })).rejects.toThrow(/does not know this payout: nothing shows it was paid/);
    const forced = await resolvePayout(s.deps, { identity: identityOf(never), as: 'succeeded', ...audit, force: true });
    expect(forced.providerAnswer).toMatch(/overridden with --force/);
  });

  it('refuses a payout that is not NEEDS_REVIEW, empty evidence, and an unknown payout', async () => {
    const s = system();
    const r = request();
    await s.pay(r);
    await expect(resolvePayout(s.deps, { identity: identityOf(r), as: 'succeeded', ...audit })).rejects.toThrow(/is SUBMITTED; only a NEEDS_REVIEW payout/);
    await expect(resolvePayout(s.deps, { identity: identityOf(r), as: 'succeeded', by: 'x', evidence: '  ' })).rejects.toBeInstanceOf(InvalidOperatorInputError);
    await expect(resolvePayout(s.deps, { identity: identityOf(request()), as: 'succeeded', ...audit })).rejects.toBeInstanceOf(PayoutNotFoundError);
  });
});

describe('payouts retry', () => {
  it('pays a FAILED payout again under a new reference, same beneficiary and amount, linked both ways', async () => {
    const s = system();
    const r = request({ amount: '31.25' });
    await s.pay(r);
    h.sim.admin.settlePayout(identityOf(r), 'failed');
    s.clock.advance(2 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('FAILED');

    const newReference = `${r.withdrawal_reference}-retry`;
    const result = await retryPayout({ ...s.deps, queue: s.queue }, { identity: identityOf(r), newReference, by: 'ama@ops', actor: 'ama@ops-laptop' });
    expect(result.sent).toBe(true);
    expect((await payoutOf(r))?.record).toMatchObject({ state: 'FAILED', retriedAs: newReference });
    expect((await payoutOf(r))?.record.history.at(-1)).toMatchObject({ reason: `retried as ${newReference} by ama@ops`, by: 'ama@ops', actor: 'ama@ops-laptop' });
    const retry = await h.repository.get({ ...identityOf(r), withdrawal_reference: newReference });
    expect(retry?.record).toMatchObject({ state: 'ACCEPTED', retryOf: r.withdrawal_reference, amount: '31.25', accountMasked: '******3456' });
    expect(await s.work()).toBe(1);
    expect(ledgerOf(h.sim, newReference)).toMatchObject({ executions: 1, amount: '31.25' });
    // Running it again does nothing more; a different second retry is refused.
    expect((await retryPayout({ ...s.deps, queue: s.queue }, { identity: identityOf(r), newReference, by: 'ama@ops' })).sent).toBe(false);
    await expect(retryPayout({ ...s.deps, queue: s.queue }, { identity: identityOf(r), newReference: 'other', by: 'x' })).rejects.toThrow(
      `was already retried as ${newReference}`,
    );
  });

  it('refuses a new reference another payout holds, before linking: the FAILED payout stays retryable', async () => {
    const s = system();
    const other = request();
    await s.pay(other);
    const r = request({ amount: '12.00' });
    await s.pay(r);
    h.sim.admin.settlePayout(identityOf(r), 'failed');
    s.clock.advance(2 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('FAILED');

    await expect(
      retryPayout({ ...s.deps, queue: s.queue }, { identity: identityOf(r), newReference: other.withdrawal_reference, by: 'ama@ops' }),
    ).rejects.toThrow(`reference ${other.withdrawal_reference} is already used by another payout`);
    expect((await payoutOf(r))?.record.retriedAs).toBeUndefined();
    expect(await s.work()).toBe(0);

    const result = await retryPayout({ ...s.deps, queue: s.queue }, { identity: identityOf(r), newReference: `${r.withdrawal_reference}-b`, by: 'ama@ops' });
    expect(result.sent).toBe(true);
    expect((await payoutOf(r))?.record.retriedAs).toBe(`${r.withdrawal_reference}-b`);
    expect(await s.work()).toBe(1);
  });

  it('checks a full account number the operator gives against the first payout\'s fingerprint, not its mask alone', async () => {
    const s = system();
    const r = request({ amount: '40.00' });
    // Refused, then unknown to the provider for the whole grace period: FAILED, and GetPayout gives no account.
    h.sim.admin.setFaults('payout', { refusalRate: 1, refusals: [{ status: 400, body: '{"success":false,"message":"Transaction could not be processed"}' }], times: 1 });
    await s.pay(r);
    await s.reconcile();
    s.clock.advance(16 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('FAILED');
    const retry = (accountNumber?: string) =>
      retryPayout({ ...s.deps, queue: s.queue, fingerprints: testFingerprints }, { identity: identityOf(r), newReference: `${r.withdrawal_reference}-r`, by: 'ama@ops', accountNumber });
    await expect(retry()).rejects.toMatchObject({ name: 'InvalidOperatorInputError', input: 'accountNumber', message: expect.stringMatching(/: give the beneficiary's full account number$/) });
    // The same last four digits, other digits before them: another account.
    await expect(retry(`0555${r.account_number.slice(4)}`)).rejects.toThrow(/is not the first payout's account: its last digits match/);
    expect((await payoutOf(r))?.record.retriedAs).toBeUndefined();
    const result = await retry(r.account_number);
    expect(result.retry.record.accountFingerprint).toBe(await testFingerprints.of(r));
    expect(await s.work()).toBe(1);
    expect(ledgerOf(h.sim, `${r.withdrawal_reference}-r`)).toMatchObject({ executions: 1 });
  });

  it('is refused unless FAILED, and while the provider could still deliver the first payout', async () => {
    const s = system();
    const pending = request();
    await s.pay(pending);
    await expect(retryPayout({ ...s.deps, queue: s.queue }, { identity: identityOf(pending), newReference: 'n-1', by: 'x' })).rejects.toThrow(
      /is SUBMITTED; only a FAILED payout can be retried/,
    );
    // An operator marked it FAILED with --force, but the provider still holds it PENDING.
    const r = await inReview(s);
    await expect(resolvePayout(s.deps, { identity: identityOf(r), as: 'failed', by: 'x', evidence: 'customer says not received' })).rejects.toThrow(
      /the provider still holds it as PENDING: it could still be delivered/,
    );
    await resolvePayout(s.deps, { identity: identityOf(r), as: 'failed', by: 'x', evidence: 'customer says not received', force: true });
    await expect(retryPayout({ ...s.deps, queue: s.queue }, { identity: identityOf(r), newReference: `${r.withdrawal_reference}-2`, by: 'x' })).rejects.toThrow(
      /provider says PENDING .* could still be delivered/,
    );
    expect(await s.work()).toBe(0);
  });
});

describe('a payout whose Payout call may have reached the provider, then "not found" (the walkthrough of finding 1 and 2)', () => {
  /** Payout times out (the provider executed it), GetPayout lags ("not found"): through the grace period to review. */
  async function unknownThenNotFound(s: ReturnType<typeof system>, r: PayoutRequestInput) {
    h.sim.admin.setFaults('payout', { timeoutRate: 1, times: 1 });
    expect(await s.pay(r)).toMatchObject({ state: 'UNKNOWN' });
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1 });
    h.sim.admin.setFaults('getPayout', { lagRate: 1 });
    s.clock.advance(MINUTE);
    await s.reconcile();
    s.clock.advance(16 * MINUTE);
    await s.reconcile();
  }

  /** A signed order notification for the payout, stored as the receiver stores one (the events table on dynalite). */
  async function notified(s: ReturnType<typeof system>, r: PayoutRequestInput, data: Record<string, unknown> = {}) {
    const receivedAt = s.clock.now().toISOString();
    const body = {
      status: 'success',
      message: 'Order notification',
      data: {
        withdrawal_reference: r.withdrawal_reference,
        platform_merchant_id: r.platform_merchant_id,
        currency: r.currency,
        payment: { status: 'PAID' },
        order_details: { status: 'COMPLETED', partner_order_id: r.withdrawal_reference, currency: r.currency },
        ...data,
      },
      signature: 'sig',
    };
    const eventId = `payout-notification#${r.withdrawal_reference}-${receivedAt}-${JSON.stringify(data).length}`;
    await s.deps.notifications.putOnce({
      eventId,
      source: 'payout-notification',
      body: JSON.stringify(body),
      receivedAt,
      recognized: true,
      expiresAt: Math.floor(Date.now() / 1000) + 86_400,
      withdrawalReference: r.withdrawal_reference,
    });
    return { eventId, receivedAt };
  }

  it('a FAILED forced on "not found" is not retried: refused, nothing sent, one execution in the ledger; retry --force with evidence is recorded on both payouts', async () => {
    const s = system();
    const r = request();
    const retry = (extra: { force?: boolean; evidence?: string } = {}) =>
      retryPayout({ ...s.deps, queue: s.queue }, { identity: identityOf(r), newReference: `${r.withdrawal_reference}-R1`, by: 'ama@ops', accountNumber: r.account_number, ...extra });
    try {
      await unknownThenNotFound(s, r);
      expect((await payoutOf(r))?.record).toMatchObject({ state: 'NEEDS_REVIEW', reason: 'provider does not know this withdrawal_reference after 15 minutes (resubmission disabled)' });
      const refused = await resolvePayout(s.deps, { identity: identityOf(r), as: 'failed', by: 'ama@ops', evidence: 'x' }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ forcible: true, message: expect.stringMatching(/may have reached the provider.*; what settles it is the provider's written confirmation that it never executed/) });
      await resolvePayout(s.deps, { identity: identityOf(r), as: 'failed', by: 'ama@ops', evidence: 'customer says not received', force: true });
      expect((await payoutOf(r))?.state).toBe('FAILED');

      const refusedRetry = await retry().catch((e: unknown) => e);
      expect(refusedRetry).toMatchObject({
        name: 'OperatorActionRefusedError',
        forcible: true,
        message: expect.stringMatching(/^not retried: .* is FAILED on ama@ops's resolve against the provider's answer \(--force, at .+\), and a Payout call for it may have reached the provider/),
      });
      expect((await payoutOf(r))?.record.retriedAs).toBeUndefined();
      expect(await h.repository.get({ ...identityOf(r), withdrawal_reference: `${r.withdrawal_reference}-R1` })).toBeUndefined();
      expect(await s.work()).toBe(0);
      expect(ledgerOf(h.sim, `${r.withdrawal_reference}-R1`)).toBeUndefined();
      expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1 });

      // The override needs evidence, and says on both payouts that it may pay twice.
      await expect(retry({ force: true })).rejects.toBeInstanceOf(InvalidOperatorInputError);
      const forced = await retry({ force: true, evidence: 'provider ticket 5521: never executed' });
      expect(forced.forced).toBe(true);
      expect((await payoutOf(r))?.record.history.at(-1)).toMatchObject({
        reason: expect.stringMatching(/forced against the provider's answer: if the first payout was executed after all, the beneficiary is paid twice$/),
        evidence: 'provider ticket 5521: never executed',
        providerAnswer: expect.stringMatching(/^not found .*; overridden with --force$/),
      });
      expect(forced.retry.record.history[0]).toMatchObject({ by: 'ama@ops', evidence: 'provider ticket 5521: never executed', reason: expect.stringMatching(/forced by ama@ops against the provider's answer/) });
      // Taken off the queue unprocessed: this test shows the refusal, not the double payout the override risks.
      await takeAllMessages(h.sqs, h.aws.queueUrls.payouts);
    } finally {
      h.sim.admin.clearFaults();
    }
  });

  it('a signed notification naming the payout is an acknowledgement: review names it, resolve --as failed and retry refuse', async () => {
    const s = system();
    const r = request();
    try {
      h.sim.admin.setFaults('payout', { timeoutRate: 1, times: 1 });
      expect(await s.pay(r)).toMatchObject({ state: 'UNKNOWN' });
      const notice = await notified(s, r);
      // One for the same reference of another merchant does not name this payout.
      await notified(s, r, { platform_merchant_id: 'another-merchant', payment: { status: 'FAILED<script>\u001b[31m' } });
      h.sim.admin.setFaults('getPayout', { lagRate: 1 });
      s.clock.advance(MINUTE);
      await s.reconcile();
      s.clock.advance(16 * MINUTE);
      await s.reconcile();
      const review = await payoutOf(r);
      expect(review?.state).toBe('NEEDS_REVIEW');
      expect(review?.record.reason).toBe(
        `contradictory provider answers: GetPayout has not known this withdrawal_reference for 15 minutes since ${review?.record.notFoundSince}, but the provider's signed order notification received at ${notice.receivedAt} (payment PAID, order COMPLETED) names it: the provider knows it, so it could still be delivered`,
      );
      await expect(resolvePayout(s.deps, { identity: identityOf(r), as: 'failed', by: 'ama@ops', evidence: 'x' })).rejects.toThrow(
        `not resolved: GetPayout says it does not know it, but the provider's signed order notification received at ${notice.receivedAt} (payment PAID, order COMPLETED) names it`,
      );
      const forced = await resolvePayout(s.deps, { identity: identityOf(r), as: 'failed', by: 'ama@ops', evidence: 'x', force: true });
      expect(forced.providerAnswer).toMatch(/^not found .*; the provider's signed order notification received at .* names it: the provider knows it; overridden with --force$/);
      await expect(
        retryPayout({ ...s.deps, queue: s.queue }, { identity: identityOf(r), newReference: `${r.withdrawal_reference}-R1`, by: 'ama@ops', accountNumber: r.account_number }),
      ).rejects.toThrow(/^not retried: GetPayout says it does not know .*, but the provider's signed order notification received at .* names it/);
      expect(await s.work()).toBe(0);
      expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1 });
    } finally {
      h.sim.admin.clearFaults();
    }
  });

  it('no resubmission is authorized on "not found" while a stored notification names the payout', async () => {
    const s = system();
    const reconcile = createReconcilePayouts({ ...s.deps, settings: { ...RECONCILE_SETTINGS, resubmitUnknownNotFound: true } });
    const r = request();
    try {
      h.sim.admin.setFaults('payout', { timeoutRate: 1, times: 1 });
      expect(await s.pay(r)).toMatchObject({ state: 'UNKNOWN' });
      await notified(s, r, { withdrawal_reference: undefined, platform_merchant_id: undefined, currency: undefined, payment: { status: 'PENDING' } });
      h.sim.admin.setFaults('getPayout', { lagRate: 1 });
      s.clock.advance(MINUTE);
      await reconcile();
      s.clock.advance(16 * MINUTE);
      await reconcile();
      const review = await payoutOf(r);
      expect(review?.record).toMatchObject({ state: 'NEEDS_REVIEW', reason: expect.stringMatching(/\(payment PENDING, order COMPLETED\) names it: the provider knows it/) });
      expect(review?.maySubmit).toBe(false);
      expect(await s.work()).toBe(0);
      expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1 });
    } finally {
      h.sim.admin.clearFaults();
    }
  });
});

describe('an authorized resubmission when the stored notifications cannot be read', () => {
  it('is withdrawn (NEEDS_REVIEW) rather than kept spendable', async () => {
    const s = system();
    const reconcile = createReconcilePayouts({ ...s.deps, settings: { ...RECONCILE_SETTINGS, resubmitUnknownNotFound: true } });
    const r = request();
    try {
      h.sim.admin.setFaults('payout', { timeoutRate: 1, times: 1 });
      expect(await s.pay(r)).toMatchObject({ state: 'UNKNOWN' });
      h.sim.admin.setFaults('getPayout', { lagRate: 1 });
      s.clock.advance(MINUTE);
      await reconcile();
      s.clock.advance(16 * MINUTE);
      await reconcile();
      const granted = await payoutOf(r);
      expect(granted?.record.resubmitAuthorized).toBe(true);
      // The events table answers no more: a notification stored since the grant cannot be ruled out.
      const unreadable = { listCallbacks: () => Promise.reject(new Error('events table throttled')), get: () => Promise.reject(new Error('events table throttled')) };
      const blind = createReconcilePayouts({ ...s.deps, notifications: unreadable, settings: { ...RECONCILE_SETTINGS, resubmitUnknownNotFound: true } });
      // Its next look, when it is due.
      s.clock.advance(Math.max(MINUTE, Date.parse(granted?.record.nextCheckAt ?? '') - s.clock.now().getTime() + 1000));
      await blind();
      const after = await payoutOf(r);
      expect(after?.record).toMatchObject({ state: 'NEEDS_REVIEW', reason: expect.stringMatching(/could not be read/) });
      expect(after?.maySubmit).toBe(false);
    } finally {
      h.sim.admin.clearFaults();
    }
  });
});

describe('REVERSED after success', () => {
  it('GetPayout reporting returned money moves SUCCEEDED to REVERSED, with history and a metric', async () => {
    const s = system();
    const r = request();
    await s.pay(r);
    h.sim.admin.settlePayout(identityOf(r), 'succeeded');
    s.clock.advance(2 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('SUCCEEDED');
    await h.sim.admin.reversePayout(identityOf(r));
    const before = counts[METRIC.payoutReversed] ?? 0;
    // The reversal watch's first look: a day after the success (the sweep after that moment).
    s.clock.advance(DAY + MINUTE);
    await s.reconcile();
    const p = await payoutOf(r);
    expect(p?.state).toBe('REVERSED');
    expect(p?.record.history.at(-1)).toMatchObject({ from: 'SUCCEEDED', to: 'REVERSED', reason: 'provider reports REVERSED: the delivered money came back' });
    expect(p?.isWatched).toBe(false);
    expect(counts[METRIC.payoutReversed]).toBe(before + 1);
  });
});
