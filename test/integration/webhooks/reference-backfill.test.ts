import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEventStore, receivedShardOf, type OperatorEventStore } from '@shared/adapters/event-store';
import type { StoredEvent } from '@shared/ports/callbacks';
import { useLocalAws } from '@test/support/local-aws';
import { runPayrelay } from '@test/support/payrelay-cli';
import { writeLocalState } from '@local/state';

/*
 * An upgrade's backfill: callbacks stored before the `by-reference` index existed carry no
 * `referenceKey`, so "the callbacks that named it" misses them until `payrelay events
 * backfill-references` adds them, walking the time listing (sharded and legacy day partitions).
 */

const local = useLocalAws({ stage: 'reference-backfill' });
let doc: DynamoDBDocumentClient;
let store: OperatorEventStore;
let stateFile: string;

const day = '2026-05-06';
const at = (second: number): string => new Date(Date.parse(`${day}T08:00:00.000Z`) + second * 1000).toISOString();

function notification(n: number, reference: string): StoredEvent {
  return { eventId: `payout-notification#old-${n}`, source: 'payout-notification', body: '{}', receivedAt: at(n), recognized: true, expiresAt: 0, withdrawalReference: reference };
}

/** An item as a version before the by-reference index wrote it: the same fields, no `referenceKey`. */
async function putAsOlderVersion(event: StoredEvent, placement: 'sharded' | 'legacy-day'): Promise<void> {
  const { eventId, ...fields } = event;
  const partition = placement === 'sharded' ? { receivedShard: receivedShardOf(eventId, new Date(event.receivedAt)) } : { receivedDay: day };
  await doc.send(new PutCommand({ TableName: local().names.eventsTable, Item: { pk: eventId, ...fields, ...partition } }));
}

const backfill = (...range: string[]) => runPayrelay(stateFile, ['--json', 'events', 'backfill-references', ...range]);
const referencedBy = async (reference: string) => (await store.listCallbacks({ reference, limit: 50 })).events.map((e) => e.eventId);

beforeAll(async () => {
  doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: local().endpoints.dynamodb }), { marshallOptions: { removeUndefinedValues: true } });
  store = createEventStore({ tableName: local().names.eventsTable, client: doc });
  stateFile = join(mkdtempSync(join(tmpdir(), 'payrelay-backfill-')), 'state.json');
  const urls = { gateway: '', kycCallback: '', payoutNotification: '', payoutApi: '', kycApi: '' };
  writeLocalState({ pid: process.pid, startedAt: new Date().toISOString(), stage: 'reference-backfill', urls, env: local().env }, stateFile);
  for (let n = 0; n < 40; n += 1) await putAsOlderVersion(notification(n, `WD-${n % 4}`), n % 10 === 0 ? 'legacy-day' : 'sharded');
  await putAsOlderVersion({ eventId: 'kyc#old-user', source: 'kyc', body: '{}', receivedAt: at(50), recognized: true, expiresAt: 0, appId: 'app-1', userReference: 'U-1' }, 'sharded');
  await putAsOlderVersion({ eventId: 'kyc#old-unrecognized', source: 'kyc', body: '{}', receivedAt: at(51), recognized: false, unrecognizedReason: 'status missing', expiresAt: 0 }, 'sharded');
  // Stored by this version: already listed by reference.
  await store.putOnce({ ...notification(60, 'WD-0'), eventId: 'payout-notification#new-60' });
});

describe('payrelay events backfill-references', () => {
  it('adds every callback stored before the by-reference index to it, from sharded and legacy day partitions alike', async () => {
    expect(await referencedBy('WD-0')).toEqual(['payout-notification#new-60']);
    const run = await backfill('--since', `${day}T00:00:00Z`, '--until', `${day}T23:59:59Z`);
    expect(run, run.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(run.stdout)).toMatchObject({ scanned: 43, added: 41, unchanged: 1, noReference: 1 });
    const wd0 = Array.from({ length: 10 }, (_, k) => `payout-notification#old-${36 - 4 * k}`);
    expect(await referencedBy('WD-0')).toEqual(['payout-notification#new-60', ...wd0]);
    expect(await referencedBy('U-1')).toEqual(['kyc#old-user']);
    const item = await doc.send(new GetCommand({ TableName: local().names.eventsTable, Key: { pk: 'payout-notification#old-4' } }));
    expect(item.Item).toMatchObject({ referenceKey: 'payout-notification#WD-0', withdrawalReference: 'WD-0', body: '{}' });
  });

  it('adds nothing on a second run, and leaves callbacks outside the range alone', async () => {
    await putAsOlderVersion({ ...notification(99, 'WD-9'), receivedAt: '2026-05-07T00:00:00.000Z' }, 'sharded');
    const again = await backfill('--since', `${day}T00:00:00Z`, '--until', '2026-05-07T00:00:00Z');
    expect(again, again.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(again.stdout)).toMatchObject({ scanned: 43, added: 0, unchanged: 42, noReference: 1 });
    expect(await referencedBy('WD-9')).toEqual([]);
  });

  it('refuses a range that ends before it starts, with the invalid-input exit code (3) and no write', async () => {
    const run = await backfill('--since', '2026-05-07T00:00:00Z', '--until', `${day}T00:00:00Z`);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/--since\/--until: the range is empty: 2026-05-\d\dT00:00:00\.000Z is not after 2026-05-07T00:00:00\.000Z/);
    expect(await referencedBy('WD-9')).toEqual([]);
  });
});
