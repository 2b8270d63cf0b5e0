import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFunction } from '@local/lambda';
import { startSqsPoller, type SqsPollerHandle } from '@local/sqs-poller';
import { FUNCTIONS } from '@shared/config/functions';
import { identityOf, ledgerOf, request, startHarness, type Harness } from './harness';

/*
 * A provider's Retry-After on AccountVerification delays the message's next delivery: the worker
 * changes the received message's visibility on fauxqs, and the local SQS poller (the event source
 * mapping's stand-in) leaves it alone, so the message comes back no earlier than the provider asked,
 * even though the queue's own visibility time-out here is 1 second.
 */

let h: Harness;
let poller: SqsPollerHandle | undefined;

beforeAll(async () => {
  h = await startHarness({ aws: { visibilityTimeoutSeconds: 1 } });
});
afterAll(async () => {
  await poller?.stop();
  await h?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('worker + local SQS poller: Retry-After delays the next delivery', () => {
  it('a 429 with Retry-After: 3 on AccountVerification brings the message back after >= 3 s, then pays it once', async () => {
    const worker = await loadFunction(FUNCTIONS.payoutWorker, { stage: 'it', region: 'eu-west-1' });
    const verifications: number[] = [];
    const counted = {
      ...worker,
      async invoke<R>(event: unknown): Promise<R> {
        verifications.push(Date.now());
        return worker.invoke<R>(event);
      },
    };
    h.sim.admin.setFaults('accountVerification', { errorRate: 1, errorStatus: 429, retryAfter: '3', times: 1 });
    const r = request();
    poller = await startSqsPoller({ sqs: h.sqs, queueUrl: h.aws.queueUrls.payouts, fn: counted, region: 'eu-west-1', waitSeconds: 1 });
    await h.sqs.send(new SendMessageCommand({ QueueUrl: h.aws.queueUrls.payouts, MessageBody: JSON.stringify(r) }));
    for (let i = 0; i < 80 && (await h.repository.get(identityOf(r)))?.state !== 'SUBMITTED'; i++) await sleep(100);
    expect((await h.repository.get(identityOf(r)))?.state).toBe('SUBMITTED');
    expect(verifications).toHaveLength(2);
    // The queue's visibility time-out (1 s) would have brought it back at once; the Retry-After held it.
    expect((verifications[1] ?? 0) - (verifications[0] ?? 0)).toBeGreaterThanOrEqual(2_900);
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 1 });
  });
});
