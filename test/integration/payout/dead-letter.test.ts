import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  drainDeadLetters,
  enqueue,
  expectAtMostOneExecution,
  identityOf,
  ledgerOf,
  loadWorker,
  pollQueue,
  request,
  startHarness,
  type Harness,
  type WorkerHandler,
} from './harness';

const MAX_RECEIVES = 3;
let h: Harness;
let worker: WorkerHandler;

beforeAll(async () => {
  h = await startHarness({
    aws: { maxReceiveCount: MAX_RECEIVES, visibilityTimeoutSeconds: 1 },
    env: { PAYOUTS_MAX_RECEIVE_COUNT: String(MAX_RECEIVES) },
  });
  worker = await loadWorker();
});
afterAll(async () => {
  await h?.stop();
});

describe('poison messages through fauxqs (rule 3: no payout is lost)', () => {
  it('moves a message that fails on every receive to the DLQ after maxReceiveCount, with its reason', async () => {
    h.sim.admin.setFaults('accountVerification', { errorRate: 1 });
    const poison = request();
    const healthy = request({ account_code: 'VOD', account_number: '0201234567', expected_name: 'Akosua Boateng' });
    await enqueue(h, JSON.stringify(poison));
    const rounds = await pollQueue(h, worker);
    expect(rounds).toBeGreaterThanOrEqual(MAX_RECEIVES);
    h.sim.admin.clearFaults();

    const dead = await drainDeadLetters(h);
    expect(dead).toHaveLength(1);
    expect(dead[0]?.Body).toBe(JSON.stringify(poison));
    expect(dead[0]?.MessageAttributes?.reason?.StringValue).toMatch(
      new RegExp(`gave up after ${MAX_RECEIVES} receives: account verification did not complete: HTTP 503: "service temporarily unavailable \\(injected fault\\)"`),
    );
    // Nothing was paid: the intent written beside the verification was released (a retry token). The
    // payout is still open, so the reconciler hands it to a person if nobody redrives it.
    const payout = await h.repository.get(identityOf(poison));
    expect(payout?.record).toMatchObject({ state: 'SUBMITTING', submitRetryAllowed: true });
    expect(payout?.isFinal).toBe(false);
    expect(ledgerOf(h.sim, poison.withdrawal_reference)).toBeUndefined();

    // A redrive after the fault is gone pays it, once; other traffic was never blocked.
    await enqueue(h, dead[0]?.Body ?? '');
    await enqueue(h, JSON.stringify(healthy));
    await pollQueue(h, worker);
    for (const r of [poison, healthy]) {
      expect((await h.repository.get(identityOf(r)))?.state).toBe('SUBMITTED');
      expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });
    }
    expect(await drainDeadLetters(h)).toEqual([]);
    expectAtMostOneExecution(h.sim);
  });

  it('sends an unreadable message to the DLQ at once, without retrying it', async () => {
    await enqueue(h, '{"version":1,"amount":');
    const rounds = await pollQueue(h, worker);
    expect(rounds).toBe(1);
    const dead = await drainDeadLetters(h);
    expect(dead.map((m) => m.MessageAttributes?.reason?.StringValue)).toEqual(['message body is not JSON']);
  });
});
