import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { COLLECTIONS_TABLE } from '@shared/config/resources';
import type { Collection } from '@shared/domain/collection';
import { ConcurrentModificationError } from '@shared/domain/errors';
import type { CollectionStore } from '@shared/ports/collections';
import { conditionHeld } from './conditional-write';
import { documentClient } from './dynamodb-client';
import { decodeCursor, encodeCursor, isPartitionKey } from './list-cursor';

const [BY_CREATED_DAY] = COLLECTIONS_TABLE.indexes;
const DAY_MS = 86_400_000;

/** Stored item: the collection plus its key and the day partition of the listing index. */
type CollectionItem = Collection & { pk: string; createdDay: string };

const toItem = (collection: Collection): CollectionItem => ({
  ...collection,
  pk: collection.partnerOrderId,
  createdDay: collection.createdAt.slice(0, 10),
});

function toCollection(item: Record<string, unknown>): Collection {
  const { pk: _pk, createdDay: _day, ...collection } = item as unknown as CollectionItem;
  return collection;
}

/**
 * Days with nothing on them one page reads at most before it answers with what it has and a cursor
 * to go on from: a month of empty days, so one request costs at most this many empty Queries (plus
 * one per collection shown) however sparse the range, and the caller decides whether to read on.
 */
export const MAX_EMPTY_DAYS_PER_PAGE = 31;

/** The list cursor: the day being read and, within it, the key to resume after. */
interface ListCursor {
  d: string;
  k?: Record<string, unknown>;
}

/** A real calendar day as `YYYY-MM-DD` (not 2027-02-31, which Date.parse takes for March 3). */
const isCalendarDay = (d: unknown): d is string =>
  typeof d === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(d) && !Number.isNaN(Date.parse(d)) && new Date(Date.parse(d)).toISOString().slice(0, 10) === d;

/**
 * A cursor of this query: a day within the days the query covers (its first to its last; an earlier
 * day ends the listing) and, when
 * the page stopped inside that day, exactly the key the day's Query stopped at (the table key and the
 * index keys, all strings, the day's partition, a creation time of that day within the range). Any
 * other day would be read (one Query a day) down to `since`: a far-future day, millions of them.
 */
const listCursorOf =
  (range: { from: string; to: string }) =>
  (v: unknown): v is ListCursor => {
    if (typeof v !== 'object' || v === null || !Object.keys(v).every((name) => name === 'd' || name === 'k')) return false;
    const { d, k } = v as { d: unknown; k?: unknown };
    if (!isCalendarDay(d) || d > range.to.slice(0, 10)) return false;
    // A day before the range: the same command run again after midnight with a relative --since (the
    // range moved on). The listing is over; nothing is read.
    if (d < range.from.slice(0, 10)) return true;
    return (
      k === undefined ||
      (isPartitionKey(k, { tableKey: 'pk', partitionKey: BY_CREATED_DAY.partitionKey.name, partition: d, sortKey: BY_CREATED_DAY.sortKey.name, range }) &&
        String((k as Record<string, string>).createdAt).slice(0, 10) === d)
    );
  };

/**
 * The collections table. A new collection is one conditional PutItem (`attribute_not_exists`); every
 * later write is a PutItem conditional on the version read, so a notification and the creation's
 * answer never overwrite each other. Listing reads the `by-created-day` index day by day, newest
 * first; it never Scans.
 */
export function createCollectionRepository(options: { tableName: string; client?: DynamoDBDocumentClient }): CollectionStore {
  const client = options.client ?? documentClient();
  const tableName = options.tableName;
  return {
    async get(partnerOrderId) {
      const out = await client.send(new GetCommand({ TableName: tableName, Key: { pk: partnerOrderId }, ConsistentRead: true }));
      return out.Item === undefined ? undefined : toCollection(out.Item);
    },

    async create(collection) {
      return conditionHeld(client.send(new PutCommand({ TableName: tableName, Item: toItem(collection), ConditionExpression: 'attribute_not_exists(pk)' })));
    },

    async save(previous, next) {
      const stored: Collection = { ...next, version: previous.version + 1 };
      const saved = await conditionHeld(
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: toItem(stored),
            ConditionExpression: '#version = :version',
            ExpressionAttributeNames: { '#version': 'version' },
            ExpressionAttributeValues: { ':version': previous.version },
          }),
        ),
      );
      if (!saved) throw new ConcurrentModificationError(`collection ${previous.partnerOrderId} changed since it was read`);
      return stored;
    },

    async list(query) {
      const until = query.until ?? new Date();
      const lastIncluded = new Date(until.getTime() - 1).toISOString();
      const since = query.since.toISOString();
      const firstDay = since.slice(0, 10);
      let at: ListCursor = query.cursor ? decodeCursor(query.cursor, listCursorOf({ from: since, to: lastIncluded })) : { d: lastIncluded.slice(0, 10) };
      const filters: string[] = [];
      const values: Record<string, string> = {};
      if (query.orderStatus) {
        filters.push('orderStatus = :order');
        values[':order'] = query.orderStatus;
      }
      if (query.paymentStatus) {
        filters.push('paymentStatus = :payment');
        values[':payment'] = query.paymentStatus;
      }
      const collections: Collection[] = [];
      // Days read to their end that added nothing to this page; at MAX_EMPTY_DAYS_PER_PAGE the page ends.
      let emptyDays = 0;
      let dayFound = 0;
      while (at.d >= firstDay && collections.length < query.limit && emptyDays < MAX_EMPTY_DAYS_PER_PAGE) {
        const page = await client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: BY_CREATED_DAY.indexName,
            KeyConditionExpression: 'createdDay = :day AND createdAt BETWEEN :since AND :until',
            ...(filters.length > 0 ? { FilterExpression: filters.join(' AND ') } : {}),
            ExpressionAttributeValues: { ':day': at.d, ':since': since, ':until': lastIncluded, ...values },
            ScanIndexForward: false,
            Limit: query.limit - collections.length,
            ExclusiveStartKey: at.k,
          }),
        );
        const found = (page.Items ?? []).map(toCollection);
        collections.push(...found);
        dayFound += found.length;
        if (page.LastEvaluatedKey) {
          at = { d: at.d, k: page.LastEvaluatedKey };
        } else {
          if (dayFound === 0) emptyDays += 1;
          dayFound = 0;
          at = { d: new Date(Date.parse(at.d) - DAY_MS).toISOString().slice(0, 10) };
        }
      }
      return at.d >= firstDay ? { collections, cursor: encodeCursor(at) } : { collections };
    },
  };
}
