import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCollectionRepository, MAX_EMPTY_DAYS_PER_PAGE } from '@shared/adapters/collection-repository';
import { CollectionQueryError, listCollections, MAX_COLLECTION_RANGE_DAYS } from '@shared/app/collections';
import { newCollection } from '@shared/domain/collection';
import { InvalidListCursorError } from '@shared/domain/errors';
import type { CollectionListQuery, CollectionStore } from '@shared/ports/collections';
import { useLocalAws } from '@test/support/local-aws';

/*
 * The collections listing's bounds, against dynalite: a cursor is read only if it is one of this
 * query (its day within the range, its key exactly an index key of that day), a range is at most
 * MAX_COLLECTION_RANGE_DAYS days, and a page reads at most MAX_EMPTY_DAYS_PER_PAGE empty days before
 * it answers with a cursor to go on from. Every Query is counted.
 */

const local = useLocalAws({ stage: 'collist' });
let collections: CollectionStore;
/** The day of each Query sent, in order. */
const queried: string[] = [];

const DAY_MS = 86_400_000;
const until = new Date('2026-03-01T00:00:00.000Z');
const clock = { now: () => until };
const daysBefore = (days: number): Date => new Date(until.getTime() - days * DAY_MS);
const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (cursor: string): unknown => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));

/** Orders created on 2026-02-28, 2026-02-27, 2026-01-10 (47 empty days between) and 2025-12-01 (39 more). */
const CREATED: Array<[string, string]> = [
  ['col-feb28', '2026-02-28T10:00:00.000Z'],
  ['col-feb27', '2026-02-27T10:00:00.000Z'],
  ['col-jan10', '2026-01-10T10:00:00.000Z'],
  ['col-dec01', '2025-12-01T10:00:00.000Z'],
];

beforeAll(async () => {
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: local().endpoints.dynamodb }), { marshallOptions: { removeUndefinedValues: true } });
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'QueryCommand') {
        queried.push(String((args.input as { ExpressionAttributeValues?: Record<string, unknown> }).ExpressionAttributeValues?.[':day']));
      }
      return next(args);
    },
    { step: 'initialize', name: 'collectionListingCounter' },
  );
  collections = createCollectionRepository({ tableName: local().names.collectionsTable, client: doc });
  for (const [partnerOrderId, createdAt] of CREATED) {
    await collections.create(newCollection({ partnerOrderId, platformMerchantId: 'm-1', amount: '10', currency: 'GHS', now: new Date(createdAt) }));
  }
});

const list = (query: Omit<CollectionListQuery, 'limit'> & { limit?: number }) => listCollections({ collections, clock }, { limit: 10, ...query });

describe('collections listing: a page reads a bounded number of empty days', () => {
  it('answers after MAX_EMPTY_DAYS_PER_PAGE empty days with what it found and a cursor, and the cursors read on to the end, each order once', async () => {
    expect(MAX_EMPTY_DAYS_PER_PAGE).toBe(31);
    const since = new Date('2025-11-15T00:00:00.000Z');
    const pages: Array<{ ids: string[]; queries: number }> = [];
    let cursor: string | undefined;
    do {
      queried.length = 0;
      const page = await list({ since, ...(cursor ? { cursor } : {}) });
      pages.push({ ids: page.collections.map((c) => c.partnerOrderId), queries: queried.length });
      cursor = page.cursor;
    } while (cursor !== undefined && pages.length < 20);
    expect(pages.flatMap((p) => p.ids)).toEqual(['col-feb28', 'col-feb27', 'col-jan10', 'col-dec01']);
    // Every page reads at most 31 empty days in all, wherever they fall: 02-28, 02-27 and 31 empty
    // days; 16 empty, 01-10, 15 empty; 24 empty, 12-01, 7 empty; the last 9 days (empty), no cursor.
    expect(pages).toEqual([
      { ids: ['col-feb28', 'col-feb27'], queries: 2 + 31 },
      { ids: ['col-jan10'], queries: 16 + 1 + 15 },
      { ids: ['col-dec01'], queries: 24 + 1 + 7 },
      { ids: [], queries: 9 },
    ]);
  });

  it('a page of nothing but empty days is empty and carries a cursor to go on from', async () => {
    queried.length = 0;
    const first = await list({ since: daysBefore(100), until: new Date('2026-02-20T00:00:00.000Z') });
    expect(first.collections).toEqual([]);
    expect(queried).toHaveLength(MAX_EMPTY_DAYS_PER_PAGE);
    expect(queried[0]).toBe('2026-02-19');
    expect(first.cursor).toEqual(expect.any(String));
    const next = await list({ since: daysBefore(100), until: new Date('2026-02-20T00:00:00.000Z'), cursor: first.cursor });
    expect(next.collections.map((c) => c.partnerOrderId)).toEqual(['col-jan10']);
  });
});

describe('collections listing: the range and the cursor are bounded', () => {
  it(`refuses a range of more than MAX_COLLECTION_RANGE_DAYS (${MAX_COLLECTION_RANGE_DAYS}) days as bad input, before any Query`, async () => {
    queried.length = 0;
    const tooEarly = list({ since: new Date('2024-11-24T00:00:00.000Z') });
    await expect(tooEarly).rejects.toBeInstanceOf(CollectionQueryError);
    await expect(tooEarly).rejects.toThrow(/covers more than 400 days/);
    await expect(list({ since: daysBefore(MAX_COLLECTION_RANGE_DAYS + 1) })).rejects.toBeInstanceOf(CollectionQueryError);
    // An `until` far ahead is the same long range.
    await expect(list({ since: daysBefore(7), until: new Date('9999-12-31T00:00:00.000Z') })).rejects.toBeInstanceOf(CollectionQueryError);
    expect(queried).toEqual([]);
    // Exactly the bound is listed.
    expect((await list({ since: daysBefore(MAX_COLLECTION_RANGE_DAYS) })).collections.map((c) => c.partnerOrderId)).toEqual(['col-feb28', 'col-feb27']);
  });

  it("refuses a cursor whose day lies after the query's range, or is not a calendar day, before any Query; a day before it ends the listing", async () => {
    const since = daysBefore(30);
    queried.length = 0;
    for (const d of ['9999-12-31', '2027-12-31', '2026-03-01', '2026-02-31', '2026-2-01', 20260228]) {
      await expect(list({ since, cursor: encode({ d }) }), String(d)).rejects.toBeInstanceOf(InvalidListCursorError);
    }
    // A day before the range: the same command after midnight with a relative --since; nothing is left to read.
    for (const d of ['2026-01-29', '2020-01-01']) expect(await list({ since, cursor: encode({ d }) }), d).toEqual({ collections: [] });
    expect(queried).toEqual([]);
    // The first and the last day of the range are days of this query.
    expect((await list({ since, cursor: encode({ d: '2026-02-28' }) })).collections.map((c) => c.partnerOrderId)).toEqual(['col-feb28', 'col-feb27']);
    expect((await list({ since, cursor: encode({ d: '2026-01-30' }) })).collections).toEqual([]);
  });

  it('refuses every forged resume key: only exactly the index key of the cursor day, all strings, within the range', async () => {
    const since = daysBefore(30);
    const first = await list({ since, limit: 1 });
    expect(first.collections.map((c) => c.partnerOrderId)).toEqual(['col-feb28']);
    const handedOut = decode(first.cursor as string) as { d: string; k: Record<string, string> };
    expect(handedOut.d).toBe('2026-02-28');
    expect(Object.keys(handedOut.k).sort()).toEqual(['createdAt', 'createdDay', 'pk']);
    const { k } = handedOut;
    const forgeries: Record<string, unknown> = {
      "another day's partition": { d: '2026-02-28', k: { ...k, createdDay: '2026-02-27' } },
      'a key of another day than the cursor': { d: '2026-02-27', k },
      'an extra attribute': { d: '2026-02-28', k: { ...k, orderStatus: 'PENDING' } },
      'a missing attribute': { d: '2026-02-28', k: { pk: k.pk, createdDay: k.createdDay } },
      'a number for the time': { d: '2026-02-28', k: { ...k, createdAt: 5 } },
      'an empty key': { d: '2026-02-28', k: { ...k, pk: '' } },
      'a time of another day': { d: '2026-02-28', k: { ...k, createdAt: '2026-02-27T10:00:00.000Z' } },
      'a time after the range': { d: '2026-02-28', k: { ...k, createdAt: '2026-02-28T23:59:59.999Z' } },
      'an array for the key': { d: '2026-02-28', k: [k.pk, k.createdDay, k.createdAt] },
      'an extra top-level member': { ...handedOut, more: 1 },
    };
    queried.length = 0;
    for (const [what, cursor] of Object.entries(forgeries)) {
      await expect(list({ since, limit: 1, until: new Date('2026-02-28T20:00:00.000Z'), cursor: encode(cursor) }), what).rejects.toBeInstanceOf(InvalidListCursorError);
    }
    expect(queried).toEqual([]);
    // The cursor handed out reads on.
    expect((await list({ since, limit: 1, cursor: first.cursor })).collections.map((c) => c.partnerOrderId)).toEqual(['col-feb27']);
  });
});
