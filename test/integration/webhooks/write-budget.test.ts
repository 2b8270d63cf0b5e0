import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEventStore } from '@shared/adapters/event-store';
import { createKycRepository } from '@shared/adapters/kyc-repository';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import { createCollectionRepository } from '@shared/adapters/collection-repository';
import { sweepUnappliedCallbacks, type ApplyCallbackDeps } from '@shared/app/apply-callback';
import { receiveKycCallback, type ReceiveKycCallbackDeps } from '@shared/app/receive-kyc-callback';
import { refreshable } from '@shared/adapters/refreshable-secret';
import { useLocalAws } from '@test/support/local-aws';
import { noTelemetry, silentLog } from '@test/factories/ports';

const TOKEN = 'budget-callback-token-0123456789';
const local = useLocalAws({ stage: 'budget' });
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'TransactWriteItemsCommand', 'BatchWriteItemCommand']);
let calls: string[] = [];
let deps: ReceiveKycCallbackDeps;
let applyDeps: ApplyCallbackDeps;

beforeAll(() => {
  const client = new DynamoDBClient({ endpoint: local().endpoints.dynamodb });
  // Records every DynamoDB command the receiver sends, by name, as it leaves the SDK.
  client.middlewareStack.add(
    (next, context) => async (args) => {
      calls.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: 'countCommands' },
  );
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const clock = { now: () => new Date() };
  deps = {
    events: createEventStore({ tableName: local().names.eventsTable, client: doc }),
    secret: refreshable({ get: async () => ({ app_id: 'app-budget', callback_token: TOKEN }) }, clock),
    retentionDays: 90,
    clock,
    log: silentLog,
    telemetry: noTelemetry,
  };
  applyDeps = {
    events: createEventStore({ tableName: local().names.eventsTable, client: doc }),
    subjects: createKycRepository({ tableName: local().names.kycTable, client: doc }),
    payouts: createPayoutRepository(local().names.payoutsTable, doc),
    collections: createCollectionRepository({ tableName: local().names.collectionsTable, client: doc }),
    clock,
    log: silentLog,
    telemetry: noTelemetry,
  };
});

/** The writes of the receiver (before its 200) and of the applier's sweep after it. */
async function receive(payload: Record<string, unknown>): Promise<{ ack: string[]; apply: string[] }> {
  calls = [];
  await receiveKycCallback(deps, { token: TOKEN, body: JSON.stringify(payload), payload });
  const ack = calls.filter((name) => WRITES.has(name));
  calls = [];
  await sweepUnappliedCallbacks(applyDeps, { graceMs: 0, lateAfterMs: 60_000, budgetMs: 10_000 });
  return { ack, apply: calls.filter((name) => WRITES.has(name)) };
}

const callback = (status: string, kycStatus: string, minute: number) => ({
  status,
  event: 'applicantPending',
  order: 'o-1',
  timestamp: new Date(Date.UTC(2026, 10, 22, 9, minute)).toISOString(),
  user_reference: 'budget-user',
  meta_data: { kyc_status: kycStatus },
});

describe('DynamoDB writes per KYC callback', () => {
  it('answers after one write (store once); the applier then writes the projection once and records the apply', async () => {
    const applied = ['PutItemCommand', 'UpdateItemCommand'];
    expect(await receive(callback('init', 'awaiting_approval', 1))).toEqual({ ack: ['PutItemCommand'], apply: applied });
    expect(await receive(callback('completed', 'approved', 3))).toEqual({ ack: ['PutItemCommand'], apply: applied });
    // Redelivery: the conditional store fails; the event was applied already, so the applier finds nothing.
    expect(await receive(callback('completed', 'approved', 3))).toEqual({ ack: ['PutItemCommand'], apply: [] });
    // A late, outranked callback: stored (it is a new event), projection untouched, the apply recorded.
    expect(await receive(callback('pending', 'awaiting_approval', 2))).toEqual({ ack: ['PutItemCommand'], apply: ['UpdateItemCommand'] });
  });
});
