import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEventStore, receivedShardOf } from '@shared/adapters/event-store';
import { EVENTS_TABLE, SHARDS } from '@shared/config/resources';
import type { EventLookup, EventStore, StoredEvent } from '@shared/ports/callbacks';
import { useLocalAws } from '@test/support/local-aws';

/*
 * Callbacks by time through the sharded `by-received-shard` index: one day spreads over the shards,
 * the reader merges them oldest first, follows every page (the client forces two items per Query
 * page) and still finds events an older version stored under the legacy `by-received-day` key.
 */

const local = useLocalAws({ stage: 'event-listing' });
let doc: DynamoDBDocumentClient;
let smallPages: EventStore & EventLookup;
const queries: Array<Record<string, unknown>> = [];

const day = '2026-03-04';
const at = (second: number): string => new Date(Date.parse(`${day}T10:00:00.000Z`) + second * 1000).toISOString();

function event(n: number, second: number): StoredEvent {
  return {
    eventId: `kyc#listing-${n}`,
    source: n % 2 === 0 ? 'kyc' : 'payout-notification',
    body: JSON.stringify({ n, filler: 'x'.repeat(2_000) }),
    receivedAt: at(second),
    recognized: true,
    expiresAt: 0,
    withdrawalReference: `W-${n}`,
  };
}

beforeAll(async () => {
  doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: local().endpoints.dynamodb }), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const paged = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: local().endpoints.dynamodb }), {
    marshallOptions: { removeUndefinedValues: true },
  });
  paged.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      if (context.commandName === 'QueryCommand') {
        input.Limit = 2;
        queries.push(input);
      }
      return next(args);
    },
    { step: 'initialize', name: 'eventListingPages' },
  );
  smallPages = createEventStore({ tableName: local().names.eventsTable, client: paged });
  const store = createEventStore({ tableName: local().names.eventsTable, client: doc });
  // 40 events, event n at second (17 n mod 40): stored out of order. One the day before, one the day after.
  for (let n = 0; n < 40; n += 1) await store.putOnce(event(n, (n * 17) % 40));
  await store.putOnce({ ...event(100, 0), receivedAt: '2026-03-03T23:59:59.999Z' });
  await store.putOnce({ ...event(101, 0), receivedAt: '2026-03-05T00:00:00.000Z' });
  // Written by an older version: whole item under the day key of the legacy index, no shard.
  const { eventId, ...legacy } = event(200, 5);
  await doc.send(new PutCommand({ TableName: local().names.eventsTable, Item: { pk: eventId, ...legacy, receivedAt: at(5.5), receivedDay: day } }));
});

async function listed(since: string, until: string): Promise<Array<{ eventId: string; receivedAt: string; body?: unknown }>> {
  const out = [];
  for await (const e of smallPages.receivedBetween(new Date(since), new Date(until))) out.push(e);
  return out;
}

describe('events by time (sharded index)', () => {
  it('spreads one day over the shards, each index entry without the body', async () => {
    const shards = new Set(Array.from({ length: 40 }, (_, n) => receivedShardOf(`kyc#listing-${n}`, new Date(at(0)))));
    expect(shards.size).toBeGreaterThan(SHARDS.receivedDay / 2);
    const [timeIndex] = EVENTS_TABLE.indexes;
    const page = await doc.send(
      new QueryCommand({
        TableName: local().names.eventsTable,
        IndexName: timeIndex.indexName,
        KeyConditionExpression: 'receivedShard = :s',
        ExpressionAttributeValues: { ':s': [...shards][0] },
      }),
    );
    expect(page.Items?.length).toBeGreaterThan(0);
    for (const item of page.Items ?? []) {
      expect(item).not.toHaveProperty('body');
      expect(item).toMatchObject({ source: expect.any(String), recognized: true, withdrawalReference: expect.stringMatching(/^W-/) });
    }
  });

  it('lists a day oldest first across every shard and the legacy key, following every page, bodies left out', async () => {
    queries.length = 0;
    const events = await listed(`${day}T00:00:00.000Z`, '2026-03-05T00:00:00.000Z');
    expect(events).toHaveLength(41);
    const times = events.map((e) => e.receivedAt);
    expect(times).toEqual([...times].sort());
    expect(events.map((e) => e.eventId)).toContain('kyc#listing-200');
    expect(events.every((e) => e.body === undefined)).toBe(true);
    // 8 shards + the legacy partition, several pages each at two items a page.
    expect(queries.length).toBeGreaterThan(SHARDS.receivedDay + 1);
  });

  it('keeps ranges half-open and crosses midnight oldest day first', async () => {
    const edge = await listed('2026-03-03T23:00:00.000Z', '2026-03-04T10:00:03.000Z');
    expect(edge.map((e) => e.eventId)).toEqual(['kyc#listing-100', 'kyc#listing-0', 'kyc#listing-33', 'kyc#listing-26']);
  });

  it('reads a listed event whole by its id', async () => {
    const stored = await smallPages.get('kyc#listing-3');
    expect(stored).toMatchObject({ eventId: 'kyc#listing-3', body: expect.stringContaining('"n":3') });
    expect(stored).not.toHaveProperty('receivedShard');
  });
});
