import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEventStore } from '@shared/adapters/event-store';
import { createKycRepository } from '@shared/adapters/kyc-repository';
import { receiveKycCallback, type ReceiveKycCallbackDeps } from '@shared/app/receive-kyc-callback';
import { refreshable } from '@shared/adapters/refreshable-secret';
import { useLocalAws } from '@test/support/local-aws';
import { noTelemetry, silentLog } from '@test/factories/ports';

const TOKEN = 'budget-callback-token-0123456789';
const local = useLocalAws({ stage: 'budget' });
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'TransactWriteItemsCommand', 'BatchWriteItemCommand']);
let calls: string[] = [];
let deps: ReceiveKycCallbackDeps;

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
    subjects: createKycRepository({ tableName: local().names.kycTable, client: doc }),
    secret: refreshable({ get: async () => ({ app_id: 'app-budget', callback_token: TOKEN }) }, clock),
    retentionDays: 90,
    clock,
    log: silentLog,
    telemetry: noTelemetry,
  };
});

async function receive(payload: Record<string, unknown>): Promise<string[]> {
  calls = [];
  await receiveKycCallback(deps, { token: TOKEN, body: JSON.stringify(payload), payload });
  return calls.filter((name) => WRITES.has(name));
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
  it('costs two writes for a new callback (store once, one conditional projection write), none beyond the failed store for a redelivery', async () => {
    expect(await receive(callback('init', 'awaiting_approval', 1))).toEqual(['PutItemCommand', 'PutItemCommand']);
    expect(await receive(callback('completed', 'approved', 3))).toEqual(['PutItemCommand', 'PutItemCommand']);
    // Redelivery: the conditional store fails, the projection read finds it reflected, nothing more is written.
    expect(await receive(callback('completed', 'approved', 3))).toEqual(['PutItemCommand']);
    // A late, outranked callback: stored (it is a new event), projection untouched.
    expect(await receive(callback('pending', 'awaiting_approval', 2))).toEqual(['PutItemCommand']);
  });
});
