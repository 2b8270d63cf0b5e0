import { DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadFunction } from '@local/lambda';
import { startSqsPoller } from '@local/sqs-poller';
import { createDeadLetterQueue } from '@shared/adapters/dead-letter';
import {
  REDRIVE_RUN_ATTRIBUTE,
  deleteDeadLetter,
  listDeadLetters,
  redriveDeadLetters,
  showDeadLetter,
} from '@shared/app/dead-letters';
import type { DeadLetterQueue } from '@shared/ports/dead-letters';
import { DeadLetterNotFoundError, InvalidOperatorInputError } from '@shared/app/operator-errors';
import type { Log } from '@shared/ports/runtime';
import { FUNCTIONS } from '@shared/config/functions';
import { NOTHING_PAID } from '@shared/domain/payout';
import { payoutInState } from '@test/factories/ports';
import { drainDeadLetters, request, startHarness, type Harness } from './harness';

/*
 * The DLQ use cases on fauxqs: reading without consuming, deleting with a logged reason, and a
 * bounded redrive that ends, with a poison message back in the DLQ, while the real worker runs
 * behind the local SQS poller (the local stack's event source mapping).
 */

let h: Harness;
let dlq: DeadLetterQueue;
const lines: Array<{ message: string; fields: Record<string, unknown> }> = [];
const log: Log = {
  info: (message, ...extra) => lines.push({ message, fields: Object.assign({}, ...extra) }),
  warn: () => undefined,
  error: () => undefined,
};

async function depth(url: string): Promise<{ visible: number; hidden: number }> {
  const out = await h.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }));
  return { visible: Number(out.Attributes?.ApproximateNumberOfMessages ?? 0), hidden: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0) };
}

async function deadLetter(body: string, reason?: string): Promise<void> {
  await h.sqs.send(
    new SendMessageCommand({
      QueueUrl: h.aws.queueUrls.deadLetter,
      MessageBody: body,
      ...(reason ? { MessageAttributes: { reason: { DataType: 'String', StringValue: reason } } } : {}),
    }),
  );
}

beforeAll(async () => {
  h = await startHarness();
  dlq = createDeadLetterQueue(h.aws.queueUrls.deadLetter, h.aws.queueUrls.payouts, h.sqs);
});
afterAll(async () => {
  await h?.stop();
});
beforeEach(async () => {
  await drainDeadLetters(h);
  lines.length = 0;
});

describe('reading the DLQ consumes nothing', () => {
  it('lists id, first sent, receive count, reason and payout identity with the account masked; everything stays visible', async () => {
    const r = request();
    await deadLetter(JSON.stringify(r), 'gave up after 5 receives: account verification did not complete');
    await deadLetter('not json at all 0244123456');
    const views = await listDeadLetters(dlq);
    expect(views).toHaveLength(2);
    const payout = views.find((v) => v.identity);
    expect(payout).toMatchObject({
      reason: 'gave up after 5 receives: account verification did not complete',
      identity: { platform_merchant_id: r.platform_merchant_id, currency: 'GHS', withdrawal_reference: r.withdrawal_reference },
      accountMasked: '******3456',
      receiveCount: 1,
    });
    expect(payout?.sentAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(views.find((v) => !v.identity)?.reason).toBe('moved by the queue after too many receives; no reason recorded');
    expect(await depth(h.aws.queueUrls.deadLetter)).toEqual({ visible: 2, hidden: 0 });
    expect(JSON.stringify(views)).not.toContain('0244123456');
    // A second look right away sees the same messages (nothing hidden, nothing consumed).
    expect((await listDeadLetters(dlq)).map((v) => v.id).sort()).toEqual(views.map((v) => v.id).sort());
  });

  it('shows one body with the account number masked', async () => {
    await deadLetter(JSON.stringify(request()), 'conflicts with the stored payout');
    await deadLetter('garbage 0244123456 tail');
    const views = await listDeadLetters(dlq);
    for (const v of views) {
      const shown = await showDeadLetter(dlq, v.id);
      expect(shown.body).not.toContain('0244123456');
      expect(shown.body).toContain('******3456');
    }
    await expect(showDeadLetter(dlq, 'no-such-id')).rejects.toBeInstanceOf(DeadLetterNotFoundError);
    expect(await depth(h.aws.queueUrls.deadLetter)).toEqual({ visible: 2, hidden: 0 });
  });
});

describe('dlq delete', () => {
  it('deletes one message with a reason and logs who, why and the payout it named; needs a reason', async () => {
    const r = request();
    await deadLetter(JSON.stringify(r), 'conflicts with the stored payout');
    await deadLetter('keep me');
    const target = (await listDeadLetters(dlq)).find((v) => v.identity);
    await expect(deleteDeadLetter({ dlq, log }, { id: target?.id ?? '', reason: ' ', by: 'ama' })).rejects.toBeInstanceOf(InvalidOperatorInputError);
    await deleteDeadLetter({ dlq, log }, { id: target?.id ?? '', reason: 'duplicate of a paid retry', by: 'ama' });
    expect(lines).toEqual([
      {
        message: 'DLQ message deleted by an operator',
        fields: expect.objectContaining({ messageId: target?.id, by: 'ama', deleteReason: 'duplicate of a paid retry', withdrawal_reference: r.withdrawal_reference }),
      },
    ]);
    const left = await listDeadLetters(dlq);
    expect(left).toHaveLength(1);
    expect(left[0]?.identity).toBeUndefined();
    expect(await depth(h.aws.queueUrls.deadLetter)).toEqual({ visible: 1, hidden: 0 });
  });
});

describe('redrive of one message', () => {
  it('moves only the message named by id and leaves the others in the DLQ; an id not there is not found', async () => {
    const kept = request();
    const chosen = request();
    await deadLetter(JSON.stringify(kept), 'provider was down');
    await deadLetter(JSON.stringify(chosen), 'provider was down');
    const id = (await listDeadLetters(dlq)).find((v) => v.identity?.withdrawal_reference === chosen.withdrawal_reference)?.id ?? '';
    const report = await redriveDeadLetters({ dlq, log, runId: 'run-one' }, { only: id });
    expect(report).toMatchObject({ presentAtStart: 2, moved: 1, skipped: 1 });
    expect((await listDeadLetters(dlq)).map((v) => v.identity?.withdrawal_reference)).toEqual([kept.withdrawal_reference]);
    const out = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.aws.queueUrls.payouts, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    expect(out.Messages?.map((m) => (JSON.parse(m.Body ?? '{}') as { withdrawal_reference?: string }).withdrawal_reference)).toEqual([chosen.withdrawal_reference]);
    for (const m of out.Messages ?? []) await h.sqs.send(new DeleteMessageCommand({ QueueUrl: h.aws.queueUrls.payouts, ReceiptHandle: m.ReceiptHandle }));
    await expect(redriveDeadLetters({ dlq, log, runId: 'run-none' }, { only: id })).rejects.toBeInstanceOf(DeadLetterNotFoundError);
    expect(await depth(h.aws.queueUrls.deadLetter)).toEqual({ visible: 1, hidden: 0 });
  });
});

describe('redrive holds a message whose payout is final or in review', () => {
  it('leaves it in the DLQ (not moved, so the DLQ alarm stays on) and reports it with the payout state; an open payout\'s message moves', async () => {
    const reviewed = request();
    const open = request();
    const now = new Date();
    const identity = { platform_merchant_id: reviewed.platform_merchant_id, currency: reviewed.currency, withdrawal_reference: reviewed.withdrawal_reference };
    // What the reconciler does to a request that exhausted its receives: NEEDS_REVIEW, nothing paid.
    const review = payoutInState('VERIFYING', identity, now).needsReview(`not processed within 60 minutes; ${NOTHING_PAID}`, now);
    await h.repository.createAccepted(review);
    await deadLetter(JSON.stringify(reviewed), 'gave up after 5 receives: account verification did not complete: HTTP 503');
    await deadLetter(JSON.stringify(open), 'provider was down');
    const heldId = (await listDeadLetters(dlq)).find((v) => v.identity?.withdrawal_reference === reviewed.withdrawal_reference)?.id;
    const report = await redriveDeadLetters({ dlq, log, runId: 'run-held', payouts: h.repository }, {});
    expect(report).toMatchObject({ presentAtStart: 2, moved: 1, skipped: 0 });
    expect(report.held).toEqual([
      { id: heldId, identity, state: 'NEEDS_REVIEW', payoutReason: `not processed within 60 minutes; ${NOTHING_PAID}` },
    ]);
    expect((await listDeadLetters(dlq)).map((v) => v.identity?.withdrawal_reference)).toEqual([reviewed.withdrawal_reference]);
    const out = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.aws.queueUrls.payouts, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    expect(out.Messages?.map((m) => (JSON.parse(m.Body ?? '{}') as { withdrawal_reference?: string }).withdrawal_reference)).toEqual([open.withdrawal_reference]);
    for (const m of out.Messages ?? []) await h.sqs.send(new DeleteMessageCommand({ QueueUrl: h.aws.queueUrls.payouts, ReceiptHandle: m.ReceiptHandle }));
    // Redriving that one message by id holds it too.
    const one = await redriveDeadLetters({ dlq, log, runId: 'run-held-one', payouts: h.repository }, { only: heldId ?? '' });
    expect(one).toMatchObject({ moved: 0, held: [{ id: heldId, state: 'NEEDS_REVIEW' }] });
    expect(await depth(h.aws.queueUrls.deadLetter)).toEqual({ visible: 1, hidden: 0 });
  });
});

describe('redrive when the payout a message names cannot be looked up', () => {
  it('moves a message whose identity cannot be a payout key (lone surrogate, too long for a key), as one naming no payout', async () => {
    const surrogate = request({ withdrawal_reference: 'WD-\uD800-x' });
    const tooLong = request({ withdrawal_reference: '\u652F'.repeat(120), platform_merchant_id: '\u5546'.repeat(120) });
    const open = request();
    await deadLetter(JSON.stringify(surrogate), 'invalid payout request: withdrawal_reference: must be well-formed Unicode text (no lone surrogates)');
    await deadLetter(JSON.stringify(tooLong), 'invalid payout request: the payout identity is too long for a key');
    await deadLetter(JSON.stringify(open), 'provider was down');
    const report = await redriveDeadLetters({ dlq, log, runId: 'run-bad-keys', payouts: h.repository }, {});
    expect(report).toMatchObject({ presentAtStart: 3, moved: 3, skipped: 0, held: [], notLookedUp: [] });
    expect(lines.find((l) => l.message === 'DLQ redrive finished')?.fields).toMatchObject({ moved: 3, runId: 'run-bad-keys' });
    const out = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.aws.queueUrls.payouts, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    expect(out.Messages).toHaveLength(3);
    for (const m of out.Messages ?? []) await h.sqs.send(new DeleteMessageCommand({ QueueUrl: h.aws.queueUrls.payouts, ReceiptHandle: m.ReceiptHandle }));
    expect(await depth(h.aws.queueUrls.deadLetter)).toEqual({ visible: 0, hidden: 0 });
  });

  it('leaves a message whose payout read fails in the DLQ, reports it as not looked up, and goes on with the others', async () => {
    const unreadable = request();
    const open = request();
    await deadLetter(JSON.stringify(unreadable), 'provider was down');
    await deadLetter(JSON.stringify(open), 'provider was down');
    const unreadId = (await listDeadLetters(dlq)).find((v) => v.identity?.withdrawal_reference === unreadable.withdrawal_reference)?.id;
    const payouts = {
      get: (identity: { platform_merchant_id: string; currency: string; withdrawal_reference: string }) =>
        identity.withdrawal_reference === unreadable.withdrawal_reference
          ? Promise.reject(new Error('ProvisionedThroughputExceededException: rate of requests exceeds the allowed throughput'))
          : h.repository.get(identity),
    };
    const report = await redriveDeadLetters({ dlq, log, runId: 'run-unread', payouts }, {});
    const identity = { platform_merchant_id: unreadable.platform_merchant_id, currency: unreadable.currency, withdrawal_reference: unreadable.withdrawal_reference };
    const error = 'ProvisionedThroughputExceededException: rate of requests exceeds the allowed throughput';
    expect(report).toMatchObject({ presentAtStart: 2, moved: 1, skipped: 0, held: [], notLookedUp: [{ id: unreadId, identity, error }] });
    expect(lines.find((l) => l.message === 'DLQ redrive finished')?.fields).toMatchObject({ moved: 1, notLookedUp: [{ id: unreadId, ...identity, error }] });
    expect((await listDeadLetters(dlq)).map((v) => v.identity?.withdrawal_reference)).toEqual([unreadable.withdrawal_reference]);
    const out = await h.sqs.send(new ReceiveMessageCommand({ QueueUrl: h.aws.queueUrls.payouts, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    expect(out.Messages?.map((m) => (JSON.parse(m.Body ?? '{}') as { withdrawal_reference?: string }).withdrawal_reference)).toEqual([open.withdrawal_reference]);
    for (const m of out.Messages ?? []) await h.sqs.send(new DeleteMessageCommand({ QueueUrl: h.aws.queueUrls.payouts, ReceiptHandle: m.ReceiptHandle }));
  });
});

describe('redrive reads the identity as the worker does', () => {
  it('holds a message whose parts carry spaces the worker trims, when the trimmed payout is in review', async () => {
    const reviewed = request();
    const now = new Date();
    const identity = { platform_merchant_id: reviewed.platform_merchant_id, currency: reviewed.currency, withdrawal_reference: reviewed.withdrawal_reference };
    await h.repository.createAccepted(payoutInState('VERIFYING', identity, now).needsReview(`not processed within 60 minutes; ${NOTHING_PAID}`, now));
    const spaced = { ...reviewed, platform_merchant_id: ` ${reviewed.platform_merchant_id}`, currency: `${reviewed.currency} `, withdrawal_reference: ` ${reviewed.withdrawal_reference}\t` };
    await deadLetter(JSON.stringify(spaced), 'gave up after 5 receives: account verification did not complete: HTTP 503');
    const listed = await listDeadLetters(dlq);
    expect(listed.map((v) => v.identity)).toEqual([identity]);
    const report = await redriveDeadLetters({ dlq, log, runId: 'run-trimmed', payouts: h.repository }, {});
    expect(report).toMatchObject({ presentAtStart: 1, moved: 0, skipped: 0, held: [{ id: listed[0]?.id, identity, state: 'NEEDS_REVIEW' }] });
    expect(await depth(h.aws.queueUrls.deadLetter)).toEqual({ visible: 1, hidden: 0 });
  });
});

describe('payouts redrive is bounded', () => {
  it('moves each message present at start once; a poison message fails again, ends in the DLQ, and the run ends', async () => {
    const worker = await loadFunction(FUNCTIONS.payoutWorker, { stage: 'it', region: 'eu-west-1' });
    const poller = await startSqsPoller({ sqs: h.sqs, queueUrl: h.aws.queueUrls.payouts, fn: worker, region: 'eu-west-1', waitSeconds: 1 });
    try {
      await deadLetter('{"version":1,"not":"a payout request"', 'message body is not JSON');
      await deadLetter(JSON.stringify(request()), 'provider was down');
      const firstSent = (await listDeadLetters(dlq)).find((m) => m.reason === 'message body is not JSON')?.sentAt;
      expect(firstSent).toMatch(/^\d{4}-\d\d-\d\dT/);
      const report = await redriveDeadLetters({ dlq, log, runId: 'run-poison' }, { waitMs: 20_000 });
      expect(report).toEqual({ presentAtStart: 2, moved: 2, failedAgain: 1, skipped: 0, held: [], notLookedUp: [], runId: 'run-poison' });
      const left = await listDeadLetters(dlq);
      expect(left).toHaveLength(1);
      expect(left[0]?.reason).toBe('message body is not JSON');
      // Back in the DLQ as a new message (the worker sent it there), it still shows its first send.
      expect(left[0]?.sentAt).toBe(firstSent);
      const shown = await showDeadLetter(dlq, left[0]?.id ?? '');
      expect(shown.attributes[REDRIVE_RUN_ATTRIBUTE]).toBe('run-poison');
      // --max caps a run; what is left over is reported as skipped and stays.
      await deadLetter('{"also":"poison"}');
      const capped = await redriveDeadLetters({ dlq, log, runId: 'run-capped' }, { max: 1 });
      expect(capped).toMatchObject({ presentAtStart: 2, moved: 1, skipped: 1 });
    } finally {
      await poller.stop();
    }
  });
});
