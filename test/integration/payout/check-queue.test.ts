import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
  type SendMessageBatchCommandInput,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAws, type LocalAws } from '@local/emulators';
import { CheckNotSentError, createPayoutCheckQueue } from '@shared/adapters/payout-check-queue';
import { payoutCheckSender } from '@shared/adapters/sqs-client';
import type { PayoutIdentity } from '@shared/domain/identity';
import { parsePayoutCheck } from '@shared/messages/payout-check';

/*
 * The checks queue adapter: the checks asked for in one turn of the event loop go out together as
 * SendMessageBatch calls, against fauxqs. A refused entry inside an accepted batch (which fauxqs
 * never answers) through aws-sdk-client-mock.
 */

const identity = (n: number): PayoutIdentity => ({ platform_merchant_id: 'merchant-cq', currency: 'NGN', withdrawal_reference: `cq-${n}` });

let aws: LocalAws;
let sqs: SQSClient;
/** Each SendMessageBatch sent through `sqs`: how many entries it carried. */
const batches: number[] = [];

beforeAll(async () => {
  aws = await startLocalAws({ stage: 'cq' });
  // The check sender (a queue without a client of its own) reads its endpoint from the environment, as on Lambda.
  Object.assign(process.env, aws.env);
  sqs = new SQSClient({ endpoint: aws.endpoints.sqs, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, useQueueUrlAsEndpoint: false });
  sqs.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as Partial<SendMessageBatchCommandInput>;
      if (input.Entries) batches.push(input.Entries.length);
      return next(args);
    },
    { step: 'initialize', name: 'countCheckBatches' },
  );
});
afterAll(async () => {
  sqs?.destroy();
  await aws?.stop();
});

async function receiveAll(queueUrl: string, expected: number): Promise<string[]> {
  const bodies: string[] = [];
  for (let round = 0; round < 10 && bodies.length < expected; round++) {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    bodies.push(...(out.Messages ?? []).map((m) => m.Body ?? ''));
  }
  return bodies;
}

describe('checks queue (SendMessageBatch per turn of the event loop)', () => {
  it('sends the checks of one turn as batches of at most 10, each message with its own payout, version and delay', async () => {
    const queue = createPayoutCheckQueue(aws.queueUrls.checks, sqs);
    batches.length = 0;
    // 12 due at once and 1 delayed by 30 s, all asked for in the same turn.
    await Promise.all([...Array.from({ length: 12 }, (_, n) => queue.schedule(identity(n), n + 1, 0)), queue.schedule(identity(99), 7, 29.2)]);
    expect(batches.sort()).toEqual([10, 3].sort());

    const checks = (await receiveAll(aws.queueUrls.checks, 12)).map(parsePayoutCheck);
    expect(checks.map((c) => `${c.withdrawal_reference}@${c.payoutVersion}`).sort()).toEqual(
      Array.from({ length: 12 }, (_, n) => `cq-${n}@${n + 1}`).sort(),
    );
    const attributes = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: aws.queueUrls.checks, AttributeNames: ['ApproximateNumberOfMessagesDelayed'] }));
    expect(attributes.Attributes?.ApproximateNumberOfMessagesDelayed).toBe('1');
  });

  it('checks asked for in different turns go out in different calls (no wait for company)', async () => {
    const queue = createPayoutCheckQueue(aws.queueUrls.checks, sqs);
    batches.length = 0;
    await queue.schedule(identity(200), 1, 0);
    await queue.schedule(identity(201), 1, 0);
    expect(batches).toEqual([1, 1]);
    expect(await receiveAll(aws.queueUrls.checks, 2)).toHaveLength(2);
  });

  it('without a client of its own, sends through the check sender: one client, its middleware resolved once, no logger middleware', async () => {
    const sender = payoutCheckSender();
    expect(payoutCheckSender()).toBe(sender);
    expect(sender.config.cacheMiddleware).toBe(true);
    expect(sender.middlewareStack.identify().some((entry) => entry.startsWith('loggerMiddleware'))).toBe(false);
    const seen: number[] = [];
    // Its middleware is resolved at its first send: instrument it before.
    sender.middlewareStack.add(
      (next) => async (args) => {
        seen.push((args.input as Partial<SendMessageBatchCommandInput>).Entries?.length ?? 0);
        return next(args);
      },
      { step: 'initialize', name: 'countSenderBatches' },
    );
    const queue = createPayoutCheckQueue(aws.queueUrls.checks);
    batches.length = 0;
    await Promise.all([queue.schedule(identity(300), 4, 0), queue.schedule(identity(301), 4, 0)]);
    await queue.schedule(identity(302), 4, 0);
    expect(seen).toEqual([2, 1]);
    expect(batches).toEqual([]);
    const checks = (await receiveAll(aws.queueUrls.checks, 3)).map(parsePayoutCheck);
    expect(checks.map((c) => `${c.withdrawal_reference}@${c.payoutVersion}`).sort()).toEqual(['cq-300@4', 'cq-301@4', 'cq-302@4']);
  });

  it('rejects only the caller whose entry SQS refused; a failed call rejects every caller of its batch', async () => {
    const client = new SQSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    const mock = mockClient(client);
    const queue = createPayoutCheckQueue('https://sqs.example/000000000000/checks', client);
    mock
      .on(SendMessageBatchCommand)
      .resolvesOnce({
        Successful: [{ Id: '0', MessageId: 'm0', MD5OfMessageBody: '' }],
        Failed: [{ Id: '1', Code: 'InternalError', SenderFault: false, Message: 'try again' }],
      })
      .rejectsOnce(Object.assign(new Error('throttled'), { name: 'ThrottlingException' }));
    const [first, second] = await Promise.allSettled([queue.schedule(identity(1), 1, 0), queue.schedule(identity(2), 1, 0)]);
    expect(first.status).toBe('fulfilled');
    expect(second).toMatchObject({ status: 'rejected', reason: expect.any(CheckNotSentError) });
    expect((second as PromiseRejectedResult).reason.message).toContain('InternalError: try again');

    const both = await Promise.allSettled([queue.schedule(identity(3), 1, 0), queue.schedule(identity(4), 1, 0)]);
    expect(both.map((r) => (r.status === 'rejected' ? (r.reason as Error).name : r.status))).toEqual(['ThrottlingException', 'ThrottlingException']);
    mock.restore();
  });
});
