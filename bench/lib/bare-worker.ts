import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { PayoutIdentity } from '@shared/domain/identity';

/** The conditional write of one payout version, as the repository makes it (state and version). */
function conditionOn(state: string, version: number) {
  return {
    ConditionExpression: '#state = :state AND #version = :version',
    ExpressionAttributeNames: { '#state': 'state', '#version': 'version' },
    ExpressionAttributeValues: { ':state': { S: state }, ':version': { N: String(version) } },
  };
}

/** Resolves on the next turn of the event loop, as the worker lets its verification requests leave first. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** One payout of the bare worker: its identity and the account it pays. */
export interface BarePayout {
  readonly identity: PayoutIdentity;
  readonly amount: string;
  readonly account_number: string;
  readonly account_code: string;
}

/** What the bare worker does: the worker's calls, or its two provider calls alone. */
export type BareCalls = 'all' | 'provider-only';

/**
 * The worker's happy path with nothing of payrelay's own: the same clients (the repository's payout
 * item writer, the payout service client with its cached credentials, the checks queue), the same requests in
 * the same order and overlap — AccountVerification beside the create, which is already the intent
 * (SUBMITTING), Payout once both are in, the first check beside the call, then the outcome — and no
 * message parsing, domain,
 * name policy, logging, metrics, batch processor or middleware. What a batch of these takes is the
 * floor any worker making those calls has on the machine and emulators it runs on.
 *
 * `item` is a payout item the real worker stored: every write carries a copy of it under the
 * payout's own key, with the state and version of that step, so the writes are the same size and
 * touch the same indexes as the worker's.
 *
 * With `calls: 'provider-only'` it makes AccountVerification and then Payout and nothing else: no
 * write, no check. What that reaches is the rig's own ceiling (the simulator, HTTP and the wait for
 * the slowest record of a batch); the difference to the full bare worker is what the conditional
 * writes the money-safety rules require cost on these emulators.
 *
 * `concurrency` is the worker's WORKER_CONCURRENCY: at most that many payouts of a batch at once.
 */
export async function createBareWorker(
  item: Record<string, unknown>,
  concurrency: number,
  calls: BareCalls = 'all',
): Promise<(payouts: readonly BarePayout[]) => Promise<void>> {
  const { payoutItemWriter } = await import('@shared/adapters/dynamodb-client');
  const { payoutProviderFrom } = await import('@shared/adapters/payout-provider');
  const { createPayoutCheckQueue } = await import('@shared/adapters/payout-check-queue');
  const { loadConfig } = await import('@shared/config/env');
  const { workerEnvSchema } = await import('@shared/config/worker');
  const { payoutKey } = await import('@shared/domain/identity');
  const config = loadConfig(workerEnvSchema);
  const { provider, credentials } = payoutProviderFrom(config);
  const checks = createPayoutCheckQueue(config.PAYOUT_CHECKS_QUEUE_URL);
  const TableName = config.PAYOUTS_TABLE_NAME;

  async function payWithoutWrites(payout: BarePayout): Promise<void> {
    const creds = await credentials.get();
    const account = { account_number: payout.account_number, account_code: payout.account_code, currency: payout.identity.currency };
    await provider.verifyAccount(account, creds);
    await provider.payout({ amount: payout.amount, ...account, withdrawal_reference: payout.identity.withdrawal_reference }, creds);
  }

  async function pay(payout: BarePayout): Promise<void> {
    const creds = await credentials.get();
    const account = { account_number: payout.account_number, account_code: payout.account_code, currency: payout.identity.currency };
    const verification = provider.verifyAccount(account, creds);
    await nextTurn();
    const copy = { ...item, pk: payoutKey(payout.identity), withdrawal_reference: payout.identity.withdrawal_reference };
    const put = (written: Record<string, unknown>, condition: Partial<ReturnType<typeof conditionOn>>) =>
      payoutItemWriter().send(new PutItemCommand({ TableName, Item: marshall(written, { removeUndefinedValues: true }), ...condition }));
    const intent = put({ ...copy, state: 'SUBMITTING', version: 3 }, { ConditionExpression: 'attribute_not_exists(pk)' });
    await Promise.all([intent, verification]);
    const call = provider.payout({ amount: payout.amount, ...account, withdrawal_reference: payout.identity.withdrawal_reference }, creds);
    const firstCheck = nextTurn().then(() => checks.schedule(payout.identity, 4, 10));
    await call;
    await put({ ...copy, state: 'SUBMITTED', version: 4 }, conditionOn('SUBMITTING', 3));
    await firstCheck;
  }

  const one = calls === 'all' ? pay : payWithoutWrites;
  // At most `concurrency` payouts at once, as the worker's WORKER_CONCURRENCY: a batch larger than
  // that is worked through as slots free up.
  return async (payouts) => {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < payouts.length) await one(payouts[next++] as BarePayout);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, payouts.length) }, lane));
  };
}
