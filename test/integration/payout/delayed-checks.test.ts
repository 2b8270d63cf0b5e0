import { GetQueueAttributesCommand, PurgeQueueCommand } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SUBMITTED_CHECK_SECONDS } from '@shared/domain/payout';
import { payoutCheck } from '@shared/messages/payout-check';
import { payoutRequestEvent, sqsEvent } from '@test/factories/sqs-events';
import { scheduledEvent } from '@test/factories/scheduled-events';
import {
  checkerContext,
  expectAtMostOneExecution,
  identityOf,
  ledgerOf,
  loadChecker,
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

/*
 * Delayed checks against dynalite, fauxqs and the simulator over HTTP, through the real worker,
 * reconciler and payout-checker handlers. The simulator answers PENDING to the first GetPayout of
 * each payout and settles it at the second. A check message is delivered here by invoking the
 * checker with it (fauxqs would deliver it after its DelaySeconds; waiting for that is not tested).
 */

let h: Harness;
let worker: WorkerHandler;
let checker: WorkerHandler;
let reconciler: ReconcilerHandler;

beforeAll(async () => {
  h = await startHarness({ simulator: { progression: { settleAfterChecks: 1 } } });
  worker = await loadWorker();
  checker = await loadChecker();
  reconciler = await loadReconciler();
});
afterAll(async () => {
  await h?.stop();
});
beforeEach(async () => {
  await h.sqs.send(new PurgeQueueCommand({ QueueUrl: h.aws.queueUrls.checks }));
});
afterEach(() => expectAtMostOneExecution(h.sim));

/** Check messages waiting on the checks queue (delayed or visible). */
async function checksQueued(): Promise<number> {
  const out = await h.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: h.aws.queueUrls.checks,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesDelayed ?? 0);
}

/** A submitted payout (the worker's real path) and its stored version. */
async function submitted() {
  const r = request();
  expect((await worker(payoutRequestEvent([r]), workerContext())).batchItemFailures).toEqual([]);
  const payout = await h.repository.get(identityOf(r));
  expect(payout?.state).toBe('SUBMITTED');
  return { r, payout: payout! };
}

const checkEvent = (r: ReturnType<typeof request>, version: number, copies = 1) =>
  sqsEvent(Array.from({ length: copies }, () => JSON.stringify(payoutCheck(identityOf(r), version))));

describe('delayed payout checks (checks queue, payout checker)', () => {
  it('the worker schedules the first check; each check moves the payout as the sweep would and schedules the next, until final', async () => {
    const { r, payout } = await submitted();
    expect(await checksQueued()).toBe(1);

    // First check: the provider still says PENDING.
    expect((await checker(checkEvent(r, payout.version), checkerContext())).batchItemFailures).toEqual([]);
    const pending = await h.repository.get(identityOf(r));
    expect(pending?.state).toBe('SUBMITTED');
    expect(pending?.version).toBeGreaterThan(payout.version);
    const intent = Date.parse(pending?.record.submitIntentAt ?? '');
    // The check ran at once here (not 10 s after the intent), so the next look is the schedule's first step still ahead.
    expect(Date.parse(pending?.record.nextCheckAt ?? '')).toBe(intent + (SUBMITTED_CHECK_SECONDS[0] as number) * 1000);
    expect(await checksQueued()).toBe(2);

    // Second check: settled.
    await checker(checkEvent(r, pending!.version), checkerContext());
    const done = await h.repository.get(identityOf(r));
    expect(done?.state).toBe('SUCCEEDED');
    expect(done?.record.history.map((e) => e.to)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'SUBMITTED', 'SUCCEEDED']);
    // A final payout gets no further check message: its reversal watch is the sweep's.
    expect(await checksQueued()).toBe(2);
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1, status: 'COMPLETED' });
  });

  it('a duplicated or late check finds a newer version and does nothing', async () => {
    const { r, payout } = await submitted();
    await checker(checkEvent(r, payout.version), checkerContext());
    const after = await h.repository.get(identityOf(r));
    const queued = await checksQueued();

    // The same message again (SQS delivers at least once): the payout has moved on, nothing changes.
    expect((await checker(checkEvent(r, payout.version), checkerContext())).batchItemFailures).toEqual([]);
    const again = await h.repository.get(identityOf(r));
    expect(again?.version).toBe(after?.version);
    expect(again?.state).toBe('SUBMITTED');
    expect(await checksQueued()).toBe(queued);
  });

  it('two deliveries of one check at once: one write wins, and only one next check is scheduled', async () => {
    const { r, payout } = await submitted();
    const before = await checksQueued();
    // Both copies in one batch run concurrently, read the same version and race on the conditional write.
    expect((await checker(checkEvent(r, payout.version, 2), checkerContext())).batchItemFailures).toEqual([]);
    const after = await h.repository.get(identityOf(r));
    expect(after?.state).toBe('SUBMITTED');
    expect(after?.record.checks).toBe(1);
    expect(await checksQueued()).toBe(before + 1);
  });

  it('the scheduled sweep also schedules the next check of a payout it leaves open', async () => {
    const { r } = await submitted();
    await h.sqs.send(new PurgeQueueCommand({ QueueUrl: h.aws.queueUrls.checks }));
    await h.repository.markDueNow(r.withdrawal_reference, new Date(Date.now() - 1000));
    await reconciler(scheduledEvent(), reconcilerContext());
    expect((await h.repository.get(identityOf(r)))?.state).toBe('SUBMITTED');
    expect(await checksQueued()).toBeGreaterThanOrEqual(1);
  });

  it('drops a message that is not a payout check, without failing the batch or touching any payout', async () => {
    const response = await checker(sqsEvent(['not json', JSON.stringify({ version: 2, withdrawal_reference: 'x' })]), checkerContext());
    expect(response.batchItemFailures).toEqual([]);
  });
});
