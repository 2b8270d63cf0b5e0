import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { logger } from '@shared/observability/logger';
import { METRIC } from '@shared/observability/metric-names';
import { metrics } from '@shared/observability/metrics';
import { payoutRequestEvent, sqsEvent } from '@test/factories/sqs-events';
import { scheduledEvent } from '@test/factories/scheduled-events';
import {
  drainDeadLetters,
  expectAtMostOneExecution,
  identityOf,
  ledgerOf,
  loadReconciler,
  loadWorker,
  reconcilerContext,
  request,
  startHarness,
  workerContext,
  type Harness,
  type ReconcilerHandler,
  type WorkerHandler,
} from './harness';

let h: Harness;
let worker: WorkerHandler;
let reconciler: ReconcilerHandler;

beforeAll(async () => {
  h = await startHarness();
  worker = await loadWorker();
  reconciler = await loadReconciler();
});
afterAll(async () => {
  await h?.stop();
});
afterEach(() => {
  // Rule 1, in every test: the provider executed each withdrawal_reference at most once.
  expectAtMostOneExecution(h.sim);
  h.sim.admin.clearFaults();
});

const stateOf = async (r: ReturnType<typeof request>) => (await h.repository.get(identityOf(r)))?.state;

/** Makes the payout due now (as an order notification would) and runs the real reconciler once. */
async function reconcile(r: ReturnType<typeof request>) {
  await h.repository.markDueNow(r.withdrawal_reference, new Date(Date.now() - 1000));
  return reconciler(scheduledEvent(), reconcilerContext());
}

/** Records the name of every metric the handlers emit, instead of emitting it. */
function recordMetricNames() {
  const counted: string[] = [];
  const spy = vi.spyOn(metrics, 'addMetric').mockImplementation((name: string) => {
    counted.push(name);
    return metrics;
  });
  return { counted, spy };
}

describe('payout worker and reconciler handlers (dynalite, fauxqs, simulator)', () => {
  it('pays a valid request once and reconciles it to SUCCEEDED', async () => {
    const r = request({ amount: '25.5' });
    const response = await worker(payoutRequestEvent([r]), workerContext());
    expect(response.batchItemFailures).toEqual([]);
    const submitted = await h.repository.get(identityOf(r));
    expect(submitted?.state).toBe('SUBMITTED');
    expect(submitted?.record.verifiedName).toBe('Kwame Mensah');
    expect(submitted?.record.accountMasked).toBe('******3456');
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1, amount: '25.50' });

    const summary = await reconcile(r);
    expect(summary.transitions.SUCCEEDED).toBeGreaterThanOrEqual(1);
    const done = await h.repository.get(identityOf(r));
    expect(done?.state).toBe('SUCCEEDED');
    expect(done?.record.providerStatus).toBe('COMPLETED');
    expect(done?.record.history.map((e) => e.to)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'SUBMITTED', 'SUCCEEDED']);
    // Out of the open index: the reversal watch finds it by age in by-state (a look a day after the success).
    expect(done?.record.nextCheckAt).toBeUndefined();
  });

  it('rejects a name mismatch with both names recorded, and never calls Payout', async () => {
    const r = request({ expected_name: 'Kofi Boateng' });
    await worker(payoutRequestEvent([r]), workerContext());
    const p = await h.repository.get(identityOf(r));
    expect(p?.state).toBe('REJECTED');
    expect(p?.record.reason).toContain('Kofi Boateng');
    expect(p?.record.reason).toContain('Kwame Mensah');
    expect(p?.record.verifiedName).toBe('Kwame Mensah');
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
  });

  it('accepts a name that differs only in case, accents, punctuation and order', async () => {
    const r = request({ expected_name: 'MENSAH, Kwamé' });
    await worker(payoutRequestEvent([r]), workerContext());
    expect(await stateOf(r)).toBe('SUBMITTED');
  });

  it('rejects an unknown account', async () => {
    const r = request({ account_number: '0244000000', expected_name: undefined });
    await worker(payoutRequestEvent([r]), workerContext());
    const p = await h.repository.get(identityOf(r));
    expect(p?.state).toBe('REJECTED');
    expect(p?.record.reason).toMatch(/account not found/);
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
  });

  it('records a payout the provider settles as failed as FAILED', async () => {
    const r = request({ currency: 'NGN', account_code: '057', account_number: '0999999999', expected_name: 'Payout Always Fails' });
    await worker(payoutRequestEvent([r]), workerContext());
    expect(await stateOf(r)).toBe('SUBMITTED');
    await reconcile(r);
    const p = await h.repository.get(identityOf(r));
    expect(p?.state).toBe('FAILED');
    expect(p?.record.providerStatus).toBe('FAILED');
  });

  it('rejects a request for another merchant as misrouted, without calling the provider', async () => {
    const r = request({ platform_merchant_id: 'someone-else' });
    await worker(payoutRequestEvent([r]), workerContext());
    const p = await h.repository.get(identityOf(r));
    expect(p?.state).toBe('REJECTED');
    expect(p?.record.reason).toMatch(/misrouted/);
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
  });

  it('pays a payout for the merchant put a moment ago with `secrets put provider`, not refused from the cached secret', async () => {
    // The worker has the first merchant's secret cached (earlier tests); the secret now names another.
    await worker(payoutRequestEvent([request()]), workerContext());
    const other = h.sim.admin.createPartner({ partner_code: 'payrelay-it-2', email: 'ops2@payrelay.test', platform_merchant_id: 'merchant-it-2' });
    await h.putProviderSecret(other);
    try {
      const r = request({ platform_merchant_id: 'merchant-it-2' });
      await worker(payoutRequestEvent([r]), workerContext());
      const p = await h.repository.get(identityOf(r));
      expect(p?.state).toBe('SUBMITTED');
      expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });
      // A payout for the merchant no longer configured is still refused as misrouted, without a call.
      const stale = request();
      await worker(payoutRequestEvent([stale]), workerContext());
      expect((await h.repository.get(identityOf(stale)))?.record.reason).toMatch(/misrouted/);
      expect(ledgerOf(h.sim, stale.withdrawal_reference)).toBeUndefined();
    } finally {
      await h.rotateSecret();
    }
    // And back: the first merchant's payouts are paid again at once.
    const back = request();
    await worker(payoutRequestEvent([back]), workerContext());
    expect(await stateOf(back)).toBe('SUBMITTED');
  });

  it('never pays the retry of a payout once the provider secret names another merchant; it goes to the DLQ and is paid after the secret is back', async () => {
    h.sim.admin.setFaults('payout', { resetKeysAfterCalls: 1 });
    await worker(payoutRequestEvent([request()]), workerContext());
    // The keys were reset after that call: this payout's Payout call is not sent, a retry token waits on SUBMITTING.
    const r = request();
    await worker(payoutRequestEvent([r]), workerContext());
    expect((await h.repository.get(identityOf(r)))?.record.submitRetryAllowed).toBe(true);
    const other = h.sim.admin.createPartner({ partner_code: 'payrelay-it-3', email: 'ops3@payrelay.test', platform_merchant_id: 'merchant-it-3' });
    await h.putProviderSecret(other);
    try {
      // Whether the worker still has the old keys cached (401, then a re-read that names the other
      // merchant) or reads the new secret at once, the retry is not paid and ends in the DLQ.
      let dead: Awaited<ReturnType<typeof drainDeadLetters>> = [];
      for (const receiveCount of [2, 3]) {
        await worker(payoutRequestEvent([r], { receiveCount }), workerContext());
        dead = await drainDeadLetters(h);
        if (dead.length > 0) break;
      }
      expect(dead.map((m) => m.Body)).toEqual([JSON.stringify(r)]);
      expect(dead[0]?.MessageAttributes?.reason?.StringValue).toMatch(/no longer this deployment's merchant/);
      expect((await h.repository.get(identityOf(r)))?.state).toBe('SUBMITTING');
      expect(ledgerOf(h.sim, r.withdrawal_reference)?.executions ?? 0).toBe(0);
    } finally {
      await h.rotateSecret();
    }
    // The operator puts the merchant's (new) keys back and redrives: paid once.
    await worker(payoutRequestEvent([r], { receiveCount: 1 }), workerContext());
    expect(await stateOf(r)).toBe('SUBMITTED');
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1 });
  });

  it('calls Payout once for the same message delivered twice, in two batches and within one batch (rule 1)', async () => {
    const a = request();
    await worker(payoutRequestEvent([a]), workerContext());
    const again = await worker(payoutRequestEvent([a], { receiveCount: 2 }), workerContext());
    expect(again.batchItemFailures).toEqual([]);
    const b = request();
    const both = await worker(payoutRequestEvent([b, b, b]), workerContext());
    expect(both.batchItemFailures).toEqual([]);
    for (const r of [a, b]) {
      expect(await stateOf(r)).toBe('SUBMITTED');
      expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });
    }
  });

  it('calls Payout once when two workers race on one identity (rule 1)', async () => {
    const r = request();
    const results = await Promise.all(
      Array.from({ length: 4 }, () => worker(payoutRequestEvent([r]), workerContext())),
    );
    expect(results.flatMap((x) => x.batchItemFailures)).toEqual([]);
    expect(await stateOf(r)).toBe('SUBMITTED');
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });
    expect((await h.repository.get(identityOf(r)))?.record.submitAttempts).toBe(1);
  });

  it('records a time-out after commit as UNKNOWN, never pays again, and reconciles it to SUCCEEDED (rule 2)', async () => {
    h.sim.admin.setFaults('payout', { timeoutRate: 1, times: 1 });
    const r = request();
    const first = await worker(payoutRequestEvent([r]), workerContext());
    expect(first.batchItemFailures).toEqual([]);
    const unknown = await h.repository.get(identityOf(r));
    expect(unknown?.state).toBe('UNKNOWN');
    expect(unknown?.record.reason).toMatch(/ambiguous/);
    h.sim.admin.clearFaults();

    // A redelivery finds UNKNOWN and must not call Payout.
    await worker(payoutRequestEvent([r], { receiveCount: 2 }), workerContext());
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });

    await reconcile(r);
    expect(await stateOf(r)).toBe('SUCCEEDED');
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });
  });

  it('records a 5xx answer to Payout as UNKNOWN, not FAILED, and does not retry it (rule 2)', async () => {
    h.sim.admin.setFaults('payout', { errorRate: 1, times: 1 });
    const r = request();
    const response = await worker(payoutRequestEvent([r]), workerContext());
    expect(response.batchItemFailures).toEqual([]);
    expect(await stateOf(r)).toBe('UNKNOWN');
    await worker(payoutRequestEvent([r], { receiveCount: 2 }), workerContext());
    expect(ledgerOf(h.sim, r.withdrawal_reference)?.attempts ?? 0).toBe(0);
    expect(await stateOf(r)).toBe('UNKNOWN');
  });

  it('reports a batch item failure when verification cannot complete, and pays on redelivery', async () => {
    h.sim.admin.setFaults('accountVerification', { errorRate: 1, times: 1 });
    const ok = request();
    const r = request();
    const event = payoutRequestEvent([ok, r]);
    // The first verification call gets the fault; which record makes it depends on scheduling.
    const response = await worker(event, workerContext());
    expect(response.batchItemFailures).toHaveLength(1);
    const failedId = response.batchItemFailures[0]?.itemIdentifier;
    const failedRecord = event.Records.find((x) => x.messageId === failedId);
    const failedRequest = failedRecord?.body === JSON.stringify(r) ? r : ok;
    // Its intent, created beside the verification, was released with a retry token: nothing sent.
    expect(await stateOf(failedRequest)).toBe('SUBMITTING');
    expect(ledgerOf(h.sim, failedRequest.withdrawal_reference)).toBeUndefined();
    await worker(payoutRequestEvent([failedRequest], { receiveCount: 2 }), workerContext());
    for (const x of [ok, r]) {
      expect(await stateOf(x)).toBe('SUBMITTED');
      expect(ledgerOf(h.sim, x.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });
    }
  });

  it('counts a batch in which every record failed (the WorkerBatchFailed alarm), and not a batch with one failure', async () => {
    const { counted, spy } = recordMetricNames();
    try {
      h.sim.admin.setFaults('accountVerification', { errorRate: 1, times: 2 });
      const failed = await worker(payoutRequestEvent([request(), request()]), workerContext());
      expect(failed.batchItemFailures).toHaveLength(2);
      expect(counted.filter((name) => name === METRIC.workerBatchFailed)).toHaveLength(1);
      h.sim.admin.setFaults('accountVerification', { errorRate: 1, times: 1 });
      const partial = await worker(payoutRequestEvent([request(), request()]), workerContext());
      expect(partial.batchItemFailures).toHaveLength(1);
      expect(counted.filter((name) => name === METRIC.workerBatchFailed)).toHaveLength(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('counts every finished reconciler run (the ReconcilerHeartbeat alarm)', async () => {
    const { counted, spy } = recordMetricNames();
    try {
      await reconciler(scheduledEvent(), reconcilerContext());
      await reconciler(scheduledEvent(), reconcilerContext());
    } finally {
      spy.mockRestore();
    }
    expect(counted.filter((name) => name === METRIC.reconcileRunCompleted)).toHaveLength(2);
  });

  it('reports each concurrent invocation\'s own failures', async () => {
    h.sim.admin.setFaults('accountVerification', { errorRate: 1, times: 1 });
    const events = [payoutRequestEvent([request()]), payoutRequestEvent([request()])];
    const responses = await Promise.all(events.map((e) => worker(e, workerContext())));
    const failures = responses.map((x) => x.batchItemFailures.map((f) => f.itemIdentifier));
    expect(failures.flat()).toHaveLength(1);
    const failedIndex = failures.findIndex((f) => f.length === 1);
    expect(failures[failedIndex]).toEqual([events[failedIndex]?.Records[0]?.messageId]);
  });

  it('refreshes the secret once after a key reset and continues', async () => {
    h.sim.admin.setFaults('payout', { resetKeysAfterCalls: 1 });
    const a = request();
    await worker(payoutRequestEvent([a]), workerContext());
    expect(await stateOf(a)).toBe('SUBMITTED');

    // The old keys now get 401 on Payout. The worker refreshes the secret once; until the operator
    // rotates it, the call is not sent, a one-time retry token is left on SUBMITTING, and the record is retried.
    const b = request();
    const blocked = await worker(payoutRequestEvent([b]), workerContext());
    expect(blocked.batchItemFailures).toHaveLength(1);
    const waiting = await h.repository.get(identityOf(b));
    expect(waiting?.state).toBe('SUBMITTING');
    expect(waiting?.record.submitRetryAllowed).toBe(true);
    expect(ledgerOf(h.sim, b.withdrawal_reference)?.executions ?? 0).toBe(0);

    await h.rotateSecret();
    const resumed = await worker(payoutRequestEvent([b], { receiveCount: 2 }), workerContext());
    expect(resumed.batchItemFailures).toEqual([]);
    expect(await stateOf(b)).toBe('SUBMITTED');
    const c = request();
    await worker(payoutRequestEvent([c]), workerContext());
    expect(await stateOf(c)).toBe('SUBMITTED');
    for (const x of [a, b, c]) expect(ledgerOf(h.sim, x.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });
  });

  it('sends a valid request that conflicts with the stored payout of its identity to the DLQ, paying nothing more', async () => {
    const r = request();
    await worker(payoutRequestEvent([r]), workerContext());
    const before = await h.repository.get(identityOf(r));
    const other = { ...r, amount: '99.00' };
    const response = await worker(payoutRequestEvent([other]), workerContext());
    expect(response.batchItemFailures).toEqual([]);
    const dead = await drainDeadLetters(h);
    expect(dead.map((m) => m.Body)).toEqual([JSON.stringify(other)]);
    expect(dead[0]?.MessageAttributes?.reason?.StringValue).toMatch(/conflicts with the stored payout/);
    expect((await h.repository.get(identityOf(r)))?.record).toEqual(before?.record);
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1, amount: '25.50' });
  });

  it('records an invalid request with a readable identity as REJECTED with the reason', async () => {
    const r = request({ amount: '12.345' });
    const response = await worker(sqsEvent([JSON.stringify(r)]), workerContext());
    expect(response.batchItemFailures).toEqual([]);
    const p = await h.repository.get(identityOf(r));
    expect(p?.state).toBe('REJECTED');
    // Said once, in words: not "invalid payout request: invalid payout request: (message): ...".
    expect(p?.record.reason).toMatch(/^invalid payout request: amount "12\.345" has more than \d decimals for [A-Z]{3}$/);
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
  });

  it('refuses a metadata too large to keep on the payout: REJECTED naming the key, nothing paid, nothing stored of it', async () => {
    // 300 KB of metadata fits on the queue and, barely, in the create; the outcome and reconciliation
    // writes of a paid payout could then no longer be stored. The schema bounds it before anything.
    const r = request({ metadata: { note: 'x'.repeat(300_000) } });
    const response = await worker(sqsEvent([JSON.stringify(r)]), workerContext());
    expect(response.batchItemFailures).toEqual([]);
    const p = await h.repository.get(identityOf(r));
    expect(p?.state).toBe('REJECTED');
    expect(p?.record.reason).toBe('invalid payout request: metadata.note: must be at most 500 characters');
    expect(p?.record.metadata).toBeUndefined();
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
  });

  it('sends unreadable messages, and invalid ones about an existing payout, to the DLQ with the reason (rule 3)', async () => {
    const existing = request();
    await worker(payoutRequestEvent([existing]), workerContext());
    const before = await h.repository.get(identityOf(existing));
    const conflicting = JSON.stringify({ ...existing, amount: 'lots' });
    const response = await worker(sqsEvent(['not json at all', conflicting]), workerContext());
    expect(response.batchItemFailures).toEqual([]);
    const dead = await drainDeadLetters(h);
    const bodies = dead.map((m) => m.Body);
    expect(bodies).toEqual(expect.arrayContaining(['not json at all', conflicting]));
    const reasons = dead.map((m) => m.MessageAttributes?.reason?.StringValue ?? '');
    expect(reasons.some((x) => /not JSON/.test(x))).toBe(true);
    expect(reasons.some((x) => /amount/.test(x))).toBe(true);
    expect(dead.every((m) => m.MessageAttributes?.sourceMessageId?.StringValue)).toBe(true);
    expect((await h.repository.get(identityOf(existing)))?.record).toEqual(before?.record);
  });

  it('never logs a full account number or a key (rule 7)', async () => {
    const lines: string[] = [];
    const levels = ['debug', 'info', 'warn', 'error'] as const;
    // Capture what reaches the logger (all levels), whatever the configured level prints.
    const spies = levels.map((level) =>
      vi.spyOn(logger, level).mockImplementation((...args: unknown[]) => {
        lines.push(JSON.stringify(args));
      }),
    );
    try {
      h.sim.admin.setFaults('payout', { timeoutRate: 1, times: 1 });
      const r = request();
      await worker(payoutRequestEvent([r, request({ expected_name: 'Someone Else' }), request({ account_number: '0244999999' })]), workerContext());
      await worker(sqsEvent([JSON.stringify({ ...request(), amount: 'x' })]), workerContext());
      await worker(sqsEvent([JSON.stringify({ ...request(), withdrawal_reference: '', account_number: '0244123456x' })]), workerContext());
      await reconcile(r);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    const output = lines.join('\n');
    expect(output).toContain('payout transition');
    expect(output).toContain('sent to the DLQ');
    for (const secret of [h.partner.partner_secret_key, h.partner.merchant_secret_key, h.partner.partner_public_key]) {
      expect(output).not.toContain(secret);
    }
    for (const number of ['0244123456', '0244999999']) expect(output).not.toContain(number);
  });
});
