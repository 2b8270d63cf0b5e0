import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import { createProcessPayout } from '@shared/app/process-payout';
import { credentialsFromCachedSecret } from '@shared/adapters/credentials';
import type { PayoutProvider } from '@shared/ports/payouts';
import type { Clock } from '@shared/ports/runtime';
import { createReconcilePayouts } from '@shared/app/reconcile-payouts';
import { payoutKey } from '@shared/domain/identity';
import { acceptRequest, payoutRequestSchema } from '@shared/messages/payout-request';
import { PayoutServiceClient } from '@shared/providers/payout-client';
import { MERCHANT_ID, PARTNER_CODE, RECONCILE_SETTINGS, identityOf, request, startHarness, type Harness } from './harness';
import { noTelemetry, silentLog, testFingerprints } from '@test/factories/ports';
import { PAYOUTS_TABLE, REVERSAL_WATCH_MARK_KEY } from '@shared/config/resources';
import { indexWriteUnits } from '@bench/lib/gsi-writes';
import * as v from '@shared/validation/valibot';

/*
 * The happy path's DynamoDB budget, counted at the client: 3 table writes per payout (the create,
 * which is also the intent to pay; the Payout outcome; the final state from the reconciler), and
 * the open-index entry written once (its key, openShard + nextCheckAt, does not move while the
 * worker owns the payout). Index write units by DynamoDB's rules, from each written item and the one
 * it replaced: 2 at the create (open + reference), none while the worker owns it, 2 when it settles
 * (the open entry is deleted, and the by-state entry is put: the reversal watch reads that one by age,
 * so nothing is written to schedule it).
 * Also: AccountVerification overlaps the create (the intent) instead of following it, and Payout
 * waits for both.
 */

const MINUTE = 60_000;
const WRITES = new Set(['PutCommand', 'UpdateCommand', 'DeleteCommand', 'PutItemCommand', 'UpdateItemCommand']);
let h: Harness;
let client: PayoutServiceClient;
let doc: DynamoDBDocumentClient;
const events: string[] = [];
/** Index write units of each item write, in order; and the item each key holds now. */
const indexUnits: number[] = [];
const items = new Map<string, Record<string, unknown>>();

beforeAll(async () => {
  h = await startHarness({ aws: { stage: 'wbudget' } });
  client = new PayoutServiceClient({ baseUrl: h.sim.payoutBaseUrl, timeoutMs: 800 });
  doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: h.aws.endpoints.dynamodb }), { marshallOptions: { removeUndefinedValues: true } });
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Item?: Record<string, unknown>; Key?: Record<string, unknown> };
      const key = input.Item?.pk ?? input.Key?.pk;
      const pk = typeof key === 'object' && key !== null && 'S' in key ? String(key.S) : String(key);
      // The reversal watch's watermark is not a payout: its writes are logged apart (once per step of the watch, not per payout).
      const name = pk === REVERSAL_WATCH_MARK_KEY ? `WatchMark${String(context.commandName)}` : String(context.commandName);
      events.push(`${name}:start`);
      try {
        const out = await next(args);
        if (name === 'PutItemCommand' && input.Item) {
          indexUnits.push(indexWriteUnits(PAYOUTS_TABLE, items.get(pk), input.Item));
          items.set(pk, input.Item);
        }
        return out;
      } finally {
        events.push(`${name}:end`);
      }
    },
    { step: 'initialize', name: 'writeBudgetLog' },
  );
});
afterAll(async () => {
  client?.close();
  doc?.destroy();
  await h?.stop();
});

/** The worker's use case over the counted client, with AccountVerification calls logged in `events`. */
function worker(clock: Clock) {
  const repository = createPayoutRepository(h.aws.names.payoutsTable, doc);
  const credentials = credentialsFromCachedSecret({ get: async () => h.sim.admin.credentials(PARTNER_CODE, MERCHANT_ID) });
  const telemetry = noTelemetry;
  const provider: PayoutProvider = {
    verifyAccount: async (req, creds) => {
      events.push('AccountVerification:start');
      try {
        return await client.verifyAccount(req, creds);
      } finally {
        events.push('AccountVerification:end');
      }
    },
    payout: (req, creds) => {
      events.push('Payout:start');
      return client.payout(req, creds);
    },
    getPayout: (identity, creds) => client.getPayout(identity, creds),
  };
  const process = createProcessPayout({ repository, provider, credentials, fingerprints: testFingerprints, clock, telemetry, log: silentLog, settings: { nameMatchThreshold: 0.85, kycGating: false } });
  return { repository, credentials, telemetry, provider, process };
}

describe('payout happy path write budget', () => {
  it('writes the table 3 times and 4 index units, the open index entry once, the intent created beside the verification', async () => {
    let t = Date.now();
    const clock: Clock = { now: () => new Date(t) };
    const { repository, credentials, telemetry, provider, process } = worker(clock);
    const reconcile = createReconcilePayouts({
      repository,
      provider,
      credentials,
      clock,
      telemetry,
      log: silentLog,
      settings: RECONCILE_SETTINGS,
    });
    const r = request();
    const key = { TableName: h.aws.names.payoutsTable, Key: { pk: payoutKey(identityOf(r)) } };
    const raw = async () => (await h.repository.get(identityOf(r)))?.record;
    const indexKey = async () => {
      const item = (await doc.send(new GetCommand({ ...key, ConsistentRead: true }))).Item;
      return item ? `${String(item.openShard)} ${String(item.nextCheckAt)}` : undefined;
    };

    events.length = 0;
    expect(await process(v.parse(payoutRequestSchema, r))).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    const workerEvents = [...events];
    const workerWrites = workerEvents.filter((e) => WRITES.has(e.replace(/:start$/, '')) && e.endsWith(':start'));
    // The create (already the intent, SUBMITTING) and the outcome: no write waits between the
    // verification's answer and Payout.
    expect(workerWrites).toHaveLength(2);
    // AccountVerification was asked before the create's answer came back: the two overlap.
    const createAnswered = workerEvents.findIndex((e) => e.endsWith(':end') && e.startsWith('Put'));
    expect(workerEvents.indexOf('AccountVerification:start')).toBeGreaterThan(-1);
    expect(workerEvents.indexOf('AccountVerification:start')).toBeLessThan(createAnswered);
    // Payout went out only after both the intent and the verification were in, and before any other write.
    const payoutSent = workerEvents.indexOf('Payout:start');
    expect(payoutSent).toBeGreaterThan(createAnswered);
    expect(payoutSent).toBeGreaterThan(workerEvents.indexOf('AccountVerification:end'));
    expect(workerEvents.slice(createAnswered + 1, payoutSent).filter((e) => WRITES.has(e.replace(/:start$/, '')))).toEqual([]);
    const stored = await raw();
    expect(stored?.history.map((e) => e.to)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'SUBMITTED']);
    // The open-index key is still the one the create wrote: ACCEPTED's history time + the first check delay.
    expect(await indexKey()).toMatch(new RegExp(` ${new Date(Date.parse(stored?.createdAt ?? '') + MINUTE).toISOString()}$`));

    t += 2 * MINUTE;
    events.length = 0;
    await reconcile();
    const reconcileWrites = events.filter((e) => e.endsWith(':start') && WRITES.has(e.replace(/:start$/, '')));
    expect((await raw())?.state).toBe('SUCCEEDED');
    expect(reconcileWrites).toHaveLength(1);
    expect(indexUnits).toEqual([2, 0, 2]);
    // This stage's first sweep started the reversal watch's watermark: one write for the whole table.
    expect(events.filter((e) => e === 'WatchMarkPutItemCommand:start')).toHaveLength(1);
    // Settled, the payout has left the open index; it stays in by-state, where the watch finds it by age.
    expect(await indexKey()).toBe('undefined undefined');
  });

  it('moves a payout `payouts enqueue` recorded ACCEPTED through VERIFYING in its intent write, beside the verification: 2 writes after the refused create', async () => {
    const clock: Clock = { now: () => new Date() };
    const { repository, process } = worker(clock);
    const r = v.parse(payoutRequestSchema, request());
    await repository.createAccepted(acceptRequest(r, clock.now()));
    events.length = 0;
    indexUnits.length = 0;
    // A slow AccountVerification (200 ms against a few ms per write): the intent does not wait for it.
    h.sim.admin.setFaults('accountVerification', { latencyMs: 200 });
    try {
      expect(await process(r)).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    } finally {
      h.sim.admin.clearFaults();
    }
    // The worker's create (refused: the payout exists), then the intent and the outcome.
    const writes = events.flatMap((e, i) => (e.endsWith(':start') && WRITES.has(e.replace(/:start$/, '')) ? [i] : []));
    expect(writes).toHaveLength(3);
    // The intent was sent before the verification answered, and Payout after both.
    expect(writes[1]).toBeLessThan(events.indexOf('AccountVerification:end'));
    expect(events.indexOf('Payout:start')).toBeGreaterThan(events.indexOf('AccountVerification:end'));
    expect(indexUnits).toEqual([0, 0]);
    const stored = await h.repository.get(identityOf(r));
    expect(stored?.record.history.map((e) => e.to)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'SUBMITTED']);
  });
});
