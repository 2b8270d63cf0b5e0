import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { PayoutIdentity } from '@shared/domain/identity';
import { createPayoutMessageHandler, type PayoutMessageDeps } from '@shared/app/payout-messages';
import { RetryLaterError, type ProcessPayoutResult } from '@shared/app/process-payout';
import type { PayoutRequest } from '@shared/messages/payout-request';
import { payoutMessageFromSqs } from '@shared/adapters/payout-queue';
import { REDRIVE_RUN_ATTRIBUTE } from '@shared/messages/redrive';
import { METRIC } from '@shared/observability/metric-names';
import { countingTelemetry, silentLog } from '@test/factories/ports';

const valid = (reference: string): string =>
  JSON.stringify({
    version: 1,
    platform_merchant_id: 'M-1',
    currency: 'GHS',
    withdrawal_reference: reference,
    amount: '10.00',
    account_number: '0244123456',
    account_code: 'MTN',
  });

/** The worker's message policy with a scripted use case; records what reached the DLQ and REJECTED. */
function policy(options: { process?: (request: PayoutRequest) => Promise<ProcessPayoutResult>; existing?: boolean; delayFails?: boolean } = {}) {
  const delays: Array<{ receiptHandle: string; delayMs: number }> = [];
  const deadLetters: Array<{ body: string; reason: string; attributes?: Record<string, string> }> = [];
  const rejected: Array<{ identity: PayoutIdentity; reason: string }> = [];
  const telemetry = countingTelemetry();
  const deps: PayoutMessageDeps = {
    processPayout: options.process ?? (async () => ({ outcome: 'submitted', state: 'SUBMITTED' })),
    rejectInvalid: async (identity, reason) => {
      if (options.existing) return false;
      rejected.push({ identity, reason });
      return true;
    },
    deadLetters: { send: async (body, reason, attributes) => void deadLetters.push({ body, reason, attributes }) },
    redelivery: {
      delay: async (receiptHandle, delayMs) => {
        if (options.delayFails) throw new Error('AccessDenied');
        delays.push({ receiptHandle, delayMs });
      },
    },
    telemetry,
    log: silentLog,
    maxReceiveCount: 3,
    concurrency: 4,
  };
  const batch = createPayoutMessageHandler(deps)();
  return { handle: batch.handle, end: batch.end, deadLetters, rejected, telemetry, delays };
}

describe('payout message policy', () => {
  it('records an invalid request that names a new identity as REJECTED, never the DLQ, never a retry', async () => {
    const p = policy();
    const body = JSON.stringify({ version: 1, platform_merchant_id: 'M-1', currency: 'GHS', withdrawal_reference: 'bad-1', amount: '-5' });
    await expect(p.handle({ body, messageId: 'm1', receiptHandle: 'rh', receiveCount: 1 })).resolves.toBeUndefined();
    expect(p.rejected).toHaveLength(1);
    expect(p.rejected[0]?.identity).toMatchObject({ withdrawal_reference: 'bad-1' });
    expect(p.deadLetters).toEqual([]);
  });

  it('sends an invalid request whose identity already has a payout to the DLQ with the reason', async () => {
    const p = policy({ existing: true });
    const body = JSON.stringify({ version: 1, platform_merchant_id: 'M-1', currency: 'GHS', withdrawal_reference: 'taken', amount: 'ten' });
    await p.handle({ body, messageId: 'm2', receiptHandle: 'rh', receiveCount: 1 });
    expect(p.deadLetters).toHaveLength(1);
    expect(p.deadLetters[0]).toMatchObject({ body, attributes: { sourceMessageId: 'm2' } });
    expect(p.deadLetters[0]?.reason).toMatch(/^invalid payout request: .*account_number/);
    expect(p.telemetry.counts[METRIC.dlqSend]).toBe(1);
  });

  it('sends a body that is not JSON to the DLQ (no identity to reject)', async () => {
    const p = policy();
    await p.handle({ body: 'not json', messageId: 'm3', receiptHandle: 'rh', receiveCount: 1 });
    expect(p.rejected).toEqual([]);
    expect(p.deadLetters).toHaveLength(1);
  });

  it('sends a request that conflicts with the stored payout to the DLQ', async () => {
    const p = policy({ process: async () => ({ outcome: 'conflict', state: 'SUBMITTED', reason: 'amount differs' }) });
    await p.handle({ body: valid('c-1'), messageId: 'm4', receiptHandle: 'rh', receiveCount: 1 });
    expect(p.deadLetters.map((d) => d.reason)).toEqual(['conflicts with the stored payout: amount differs']);
  });

  it('lets a failure be redelivered before the last receive, and on the last receive sends it to the DLQ with the reason', async () => {
    const p = policy({ process: async () => Promise.reject(new RetryLaterError('payout service unavailable')) });
    await expect(p.handle({ body: valid('r-1'), messageId: 'm5', receiptHandle: 'rh', receiveCount: 2 })).rejects.toThrow(RetryLaterError);
    expect(p.deadLetters).toEqual([]);
    await expect(p.handle({ body: valid('r-1'), messageId: 'm5', receiptHandle: 'rh', receiveCount: 3 })).resolves.toBeUndefined();
    expect(p.deadLetters.map((d) => d.reason)).toEqual(['gave up after 3 receives: payout service unavailable']);
  });

  it("holds a retried message back as long as the provider's Retry-After asks, and only then", async () => {
    const p = policy({ process: async (r) => Promise.reject(new RetryLaterError('rate limited', r.withdrawal_reference === 'ra-1' ? 3_000 : undefined)) });
    await expect(p.handle({ body: valid('ra-1'), messageId: 'm10', receiptHandle: 'rh-10', receiveCount: 1 })).rejects.toThrow(RetryLaterError);
    await expect(p.handle({ body: valid('ra-2'), messageId: 'm11', receiptHandle: 'rh-11', receiveCount: 1 })).rejects.toThrow(RetryLaterError);
    expect(p.delays).toEqual([{ receiptHandle: 'rh-10', delayMs: 3_000 }]);
    // On the last receive the message goes to the DLQ instead: no delay.
    await p.handle({ body: valid('ra-1'), messageId: 'm10', receiptHandle: 'rh-12', receiveCount: 3 });
    expect(p.delays).toHaveLength(1);
  });

  it('still lets the message be redelivered when the queue refuses the delay', async () => {
    const p = policy({ delayFails: true, process: async () => Promise.reject(new RetryLaterError('rate limited', 5_000)) });
    await expect(p.handle({ body: valid('rf-1'), messageId: 'm12', receiptHandle: 'rh', receiveCount: 1 })).rejects.toThrow(RetryLaterError);
    expect(p.deadLetters).toEqual([]);
  });

  it('names only the error class of an unexpected failure in the DLQ reason', async () => {
    const p = policy({ process: async () => Promise.reject(new TypeError('secret-looking detail')) });
    await p.handle({ body: valid('u-1'), messageId: 'm6', receiptHandle: 'rh', receiveCount: 3 });
    expect(p.deadLetters.map((d) => d.reason)).toEqual(['gave up after 3 receives: TypeError: processing failed']);
  });

  it('retries (never dead-letters) when the receive count is unknown', async () => {
    const p = policy({ process: async () => Promise.reject(new RetryLaterError('down')) });
    await expect(p.handle({ body: valid('n-1'), messageId: 'm7', receiptHandle: 'rh', receiveCount: Number.NaN })).rejects.toThrow(RetryLaterError);
    expect(p.deadLetters).toEqual([]);
  });

  it('never runs two messages of one identity at once within a batch', async () => {
    let active = 0;
    let peak = 0;
    const p = policy({
      process: async () => {
        active += 1;
        peak = Math.max(peak, active);
        await new Promise((resolve) => setTimeout(resolve, 5));
        active -= 1;
        return { outcome: 'skipped', state: 'SUBMITTED' };
      },
    });
    await Promise.all([1, 2, 3].map((n) => p.handle({ body: valid('same'), messageId: `s${n}`, receiptHandle: 'rh', receiveCount: 1 })));
    expect(peak).toBe(1);
  });

  it('keeps the redrive run marker on a message it dead-letters again, so that run cannot move it twice', async () => {
    const p = policy({ process: async () => Promise.reject(new RetryLaterError('down')) });
    await p.handle({ body: valid('d-1'), messageId: 'm8', receiptHandle: 'rh', receiveCount: 3, redriveRun: 'run-7' });
    expect(p.deadLetters[0]?.attributes).toEqual({ sourceMessageId: 'm8', [REDRIVE_RUN_ATTRIBUTE]: 'run-7' });
    await p.handle({ body: 'not json', messageId: 'm9', receiptHandle: 'rh', receiveCount: 1 });
    expect(p.deadLetters[1]?.attributes).toEqual({ sourceMessageId: 'm9' });
  });
});

describe('payout batch', () => {
  it('counts a batch in which every message failed, and not one in which some message got through', async () => {
    // References starting with "ok" are processed; the others fail and are left to the queue.
    const process = async (request: PayoutRequest): Promise<ProcessPayoutResult> =>
      request.withdrawal_reference.startsWith('ok') ? { outcome: 'submitted', state: 'SUBMITTED' } : Promise.reject(new RetryLaterError('down'));
    const run = async (references: string[]) => {
      const p = policy({ process });
      const settled = await Promise.allSettled(references.map((r) => p.handle({ body: valid(r), messageId: r, receiptHandle: 'rh', receiveCount: 1 })));
      p.end();
      return { failed: settled.filter((s) => s.status === 'rejected').length, counted: p.telemetry.counts[METRIC.workerBatchFailed] };
    };
    expect(await run(['bad-a', 'bad-b'])).toEqual({ failed: 2, counted: 1 });
    expect(await run(['bad-c', 'ok-d'])).toEqual({ failed: 1, counted: undefined });
  });

  it('counts nothing for an empty batch', () => {
    const p = policy();
    p.end();
    expect(p.telemetry.counts[METRIC.workerBatchFailed]).toBeUndefined();
  });
});

describe('payout message from an SQS record', () => {
  const record = (attributes: Partial<SQSRecord['attributes']>, messageAttributes: SQSRecord['messageAttributes'] = {}): SQSRecord =>
    ({ body: '{}', messageId: 'id-1', receiptHandle: 'rh-1', attributes, messageAttributes }) as unknown as SQSRecord;

  it('reads the receive count and the redrive run marker', () => {
    const run = { stringValue: 'run-1', dataType: 'String', stringListValues: [], binaryListValues: [] };
    expect(payoutMessageFromSqs(record({ ApproximateReceiveCount: '4' }, { [REDRIVE_RUN_ATTRIBUTE]: run }))).toEqual({
      body: '{}',
      messageId: 'id-1',
      receiptHandle: 'rh-1',
      receiveCount: 4,
      redriveRun: 'run-1',
    });
  });

  it('counts a record without a receive count as the first receive and without a marker has none', () => {
    expect(payoutMessageFromSqs(record({}))).toEqual({ body: '{}', messageId: 'id-1', receiptHandle: 'rh-1', receiveCount: 1 });
  });
});
