import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEventStore, receivedShardOf, type OperatorEventStore } from '@shared/adapters/event-store';
import { EVENTS_TABLE, SHARDS } from '@shared/config/resources';
import { InvalidListCursorError } from '@shared/domain/errors';
import type { CallbackListQuery, ReceivedEvent, StoredEvent } from '@shared/ports/callbacks';
import { useLocalAws } from '@test/support/local-aws';
import { runPayrelay } from '@test/support/payrelay-cli';
import { writeLocalState } from '@local/state';

/*
 * Callbacks by time through the sharded `by-received-shard` index: one day spreads over the shards,
 * the reader merges them oldest first, follows every page (the client forces two items per Query
 * page) and still finds events an older version stored under the legacy `by-received-day` key.
 * The operator's listing reads the same shards newest first a page at a time with a cursor, and the
 * callbacks naming one reference from the `by-reference` index.
 */

const local = useLocalAws({ stage: 'event-listing' });
let doc: DynamoDBDocumentClient;
let smallPages: OperatorEventStore;
let plain: OperatorEventStore;
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
  plain = store;
  // 40 events, event n at second (17 n mod 40): stored out of order. One the day before, one the day after.
  for (let n = 0; n < 40; n += 1) await store.putOnce(event(n, (n * 17) % 40));
  await store.putOnce({ ...event(100, 0), receivedAt: '2026-03-03T23:59:59.999Z' });
  await store.putOnce({ ...event(101, 0), receivedAt: '2026-03-05T00:00:00.000Z' });
  // Written by an older version: whole item under the day key of the legacy index, no shard.
  const { eventId, ...legacy } = event(200, 5);
  await doc.send(new PutCommand({ TableName: local().names.eventsTable, Item: { pk: eventId, ...legacy, receivedAt: at(5.5), receivedDay: day } }));
  // Another day for the listings: 30 order notifications naming R-<n mod 3>, 30 KYC callbacks naming
  // U-<n mod 2> (one of them R-0, as a user reference), 2 unrecognized ones naming nothing.
  const { withdrawalReference: _none, ...kyc } = event(400, 0);
  await Promise.all([
    ...Array.from({ length: 30 }, (_, n) => [
      store.putOnce({ ...event(300 + n, 0), eventId: `payout-notification#busy-${n}`, source: 'payout-notification', receivedAt: busyAt(n * 2), withdrawalReference: `R-${n % 3}` }),
      store.putOnce({ ...kyc, eventId: `kyc#busy-${n}`, receivedAt: busyAt(n * 2 + 1), userReference: n === 7 ? 'R-0' : `U-${n % 2}` }),
    ]).flat(),
    ...[0, 1].map((n) => store.putOnce({ ...kyc, eventId: `kyc#unrecognized-${n}`, recognized: false, unrecognizedReason: 'status missing', receivedAt: busyAt(70 + n) })),
    store.putOnce({ ...event(600, 0), eventId: 'payout-notification#next-day', source: 'payout-notification', receivedAt: '2026-03-07T00:00:00.000Z', withdrawalReference: 'R-0' }),
  ]);
});

const busyDay = '2026-03-06';
const busyAt = (second: number): string => new Date(Date.parse(`${busyDay}T08:00:00.000Z`) + second * 1000).toISOString();

/** Every page of a listing, following its cursor; also returns how many pages it took. */
async function allPages(query: CallbackListQuery, store: OperatorEventStore = smallPages): Promise<{ events: ReceivedEvent[]; pages: number }> {
  const events: ReceivedEvent[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await store.listCallbacks({ ...query, ...(cursor ? { cursor } : {}) });
    expect(page.events.length).toBeLessThanOrEqual(query.limit);
    events.push(...page.events);
    cursor = page.cursor;
    pages += 1;
  } while (cursor !== undefined && pages < 100);
  return { events, pages };
}

const newestFirst = (events: ReceivedEvent[]): boolean => events.every((e, n) => n === 0 || (events[n - 1] as ReceivedEvent).receivedAt >= e.receivedAt);

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

describe('callback listing (newest first, a page at a time)', () => {
  it('pages through a day newest first, every callback once, each page bounded and without bodies', async () => {
    const { events, pages } = await allPages({ day: busyDay, limit: 7 });
    expect(events).toHaveLength(62);
    expect(new Set(events.map((e) => e.eventId)).size).toBe(62);
    expect(newestFirst(events)).toBe(true);
    expect(events[0]?.eventId).toBe('kyc#unrecognized-1');
    expect(pages).toBeGreaterThanOrEqual(9);
    expect(events.every((e) => !('body' in e))).toBe(true);
    // With DynamoDB's own page sizes (each shard read a few entries at a time, again when it runs dry): the same sequence.
    expect((await allPages({ day: busyDay, limit: 7 }, plain)).events).toEqual(events);
  });

  it('reads only a page worth of each shard for the first page, not the day', async () => {
    queries.length = 0;
    const first = await smallPages.listCallbacks({ day: busyDay, limit: 5 });
    expect(first.events.map((e) => e.receivedAt)).toEqual([busyAt(71), busyAt(70), busyAt(59), busyAt(58), busyAt(57)]);
    expect(first.cursor).toEqual(expect.any(String));
    // 9 partitions at two items a Query page (this client's limit), a few refills: far from the 62 entries' 31 pages.
    expect(queries.length).toBeLessThan(SHARDS.receivedDay + 1 + 6);
    expect(queries.every((q) => q.ScanIndexForward === false)).toBe(true);
  });

  it('keeps a legacy event of the day in the newest-first listing', async () => {
    const { events } = await allPages({ day, limit: 10 });
    expect(events).toHaveLength(41);
    expect(newestFirst(events)).toBe(true);
    expect(events.map((e) => e.eventId)).toContain('kyc#listing-200');
  });

  it('narrows a day to one source with a filter that may leave Query pages empty, still in order and complete', async () => {
    const { events } = await allPages({ day: busyDay, source: 'kyc', limit: 4 });
    expect(events).toHaveLength(32);
    expect(events.every((e) => e.source === 'kyc')).toBe(true);
    expect(newestFirst(events)).toBe(true);
  });

  it('lists the callbacks naming a reference from the reference index: both sources, newest first, any day', async () => {
    queries.length = 0;
    const { events } = await allPages({ reference: 'R-0', limit: 4 });
    expect(queries.every((q) => q.IndexName === 'by-reference')).toBe(true);
    expect(events.map((e) => e.eventId)).toEqual([
      'payout-notification#next-day',
      ...[27, 24, 21, 18, 15, 12, 9].map((n) => `payout-notification#busy-${n}`),
      'kyc#busy-7',
      ...[6, 3, 0].map((n) => `payout-notification#busy-${n}`),
    ]);
  });

  it('narrows a reference to one source, one day, or callbacks received from a time on', async () => {
    const notifications = await allPages({ reference: 'R-0', source: 'payout-notification', limit: 50 });
    expect(notifications.events).toHaveLength(11);
    expect(notifications.pages).toBe(1);
    const kyc = await allPages({ reference: 'R-0', source: 'kyc', limit: 50 });
    expect(kyc.events.map((e) => e.eventId)).toEqual(['kyc#busy-7']);
    const ofDay = await allPages({ reference: 'R-0', day: busyDay, limit: 50 });
    expect(ofDay.events).toHaveLength(11);
    const late = await allPages({ reference: 'R-0', receivedFrom: new Date(busyAt(40)), limit: 50 });
    expect(late.events.map((e) => e.eventId)).toEqual(['payout-notification#next-day', 'payout-notification#busy-27', 'payout-notification#busy-24', 'payout-notification#busy-21']);
    expect((await allPages({ reference: 'nobody', limit: 5 })).events).toEqual([]);
  });

  it('leaves callbacks that name no reference out of the reference index', async () => {
    const indexed = await doc.send(
      new QueryCommand({
        TableName: local().names.eventsTable,
        IndexName: 'by-reference',
        KeyConditionExpression: 'referenceKey = :r',
        ExpressionAttributeValues: { ':r': 'kyc#U-0' },
      }),
    );
    expect(indexed.Items).toHaveLength(15);
    for (const item of indexed.Items ?? []) expect(item).not.toHaveProperty('body');
    const unrecognized = await smallPages.get('kyc#unrecognized-0');
    expect(unrecognized).toBeDefined();
    expect(unrecognized).not.toHaveProperty('referenceKey');
  });

  it('refuses a cursor it did not hand out, or one of another listing, with the named error', async () => {
    const first = await smallPages.listCallbacks({ day: busyDay, limit: 3 });
    await expect(smallPages.listCallbacks({ day, limit: 3, cursor: first.cursor as string })).rejects.toBeInstanceOf(InvalidListCursorError);
    await expect(smallPages.listCallbacks({ reference: 'R-0', limit: 3, cursor: first.cursor as string })).rejects.toBeInstanceOf(InvalidListCursorError);
    await expect(smallPages.listCallbacks({ day: busyDay, limit: 3, cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(InvalidListCursorError);
  });

  it('refuses a resume key that is not exactly its own partition\'s key: all strings, nothing else, in the day', async () => {
    const first = await smallPages.listCallbacks({ day: busyDay, limit: 3 });
    const { r } = JSON.parse(Buffer.from(first.cursor as string, 'base64url').toString('utf8')) as { r: Array<Record<string, string> | 0 | null> };
    const n = r.findIndex((at) => typeof at === 'object' && at !== null);
    const key = r[n] as Record<string, string>;
    const withKey = (entry: unknown): string => Buffer.from(JSON.stringify({ r: r.map((at, i) => (i === n ? entry : at)) })).toString('base64url');
    const partitionName = Object.keys(key).find((name) => name !== 'pk' && name !== 'receivedAt') as string;
    const forgeries = {
      'an extra attribute': withKey({ ...key, source: 'kyc' }),
      'a number for the time': withKey({ ...key, receivedAt: 5 }),
      'an empty key': withKey({ ...key, pk: '' }),
      "another partition's key": withKey({ ...key, [partitionName]: `${busyDay}#${(n + 1) % 8}` }),
      'a time of another day': withKey({ ...key, receivedAt: `${day}T12:00:00.000Z` }),
      'a string for a partition': withKey('x'),
    };
    for (const [what, cursor] of Object.entries(forgeries)) {
      await expect(smallPages.listCallbacks({ day: busyDay, limit: 3, cursor }), what).rejects.toBeInstanceOf(InvalidListCursorError);
    }
    expect((await smallPages.listCallbacks({ day: busyDay, limit: 3, cursor: first.cursor as string })).events).toHaveLength(3);
  });
});

describe('payrelay events list', () => {
  it('pages through the callbacks naming a reference with the listing the console uses', async () => {
    const stateFile = join(mkdtempSync(join(tmpdir(), 'payrelay-events-')), 'state.json');
    const urls = { gateway: '', kycCallback: '', payoutNotification: '', payoutApi: '', kycApi: '' };
    writeLocalState({ pid: process.pid, startedAt: new Date().toISOString(), stage: 'event-listing', urls, env: local().env }, stateFile);
    const first = await runPayrelay(stateFile, ['--json', 'events', 'list', '--reference', 'R-0', '--source', 'payout-notification', '--limit', '8']);
    expect(first, first.stderr).toMatchObject({ code: 0 });
    const page = JSON.parse(first.stdout) as { events: ReceivedEvent[]; cursor: string | null };
    expect(page.events.map((e) => e.eventId)).toEqual((await smallPages.listCallbacks({ reference: 'R-0', source: 'payout-notification', limit: 8 })).events.map((e) => e.eventId));
    expect(page.cursor).toEqual(expect.any(String));
    const rest = await runPayrelay(stateFile, ['events', 'list', '--reference', 'R-0', '--source', 'payout-notification', '--cursor', page.cursor as string]);
    expect(rest, rest.stderr).toMatchObject({ code: 0 });
    expect(rest.stdout).toContain('payout-notification#busy-0');
    expect(rest.stdout).toMatch(/3 callback\(s\) naming R-0\n$/);
  });
});
