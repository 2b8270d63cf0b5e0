import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { COLLECTIONS_TABLE } from '@shared/config/resources';
import type { Collection } from '@shared/domain/collection';
import { ConcurrentModificationError } from '@shared/domain/errors';
import type { CollectionStore } from '@shared/ports/collections';
import { conditionHeld } from './conditional-write';
import { documentClient } from './dynamodb-client';
import { decodeCursor, encodeCursor } from './list-cursor';

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

/** The list cursor: the day being read and, within it, the key to resume after. */
interface ListCursor {
  d: string;
  k?: Record<string, unknown>;
}

/** The index key a page stopped at: exactly the table key and the index keys, all strings, in the cursor's day. */
const isIndexKey = (k: unknown, day: string): boolean => {
  if (typeof k !== 'object' || k === null || Array.isArray(k)) return false;
  const key = k as Record<string, unknown>;
  return (
    Object.keys(key).sort().join(',') === 'createdAt,createdDay,pk' &&
    typeof key.pk === 'string' &&
    key.createdDay === day &&
    typeof key.createdAt === 'string'
  );
};

const isListCursor = (v: unknown): v is ListCursor =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as ListCursor).d === 'string' &&
  /^\d{4}-\d{2}-\d{2}$/.test((v as ListCursor).d) &&
  ((v as ListCursor).k === undefined || isIndexKey((v as ListCursor).k, (v as ListCursor).d));

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
      const firstDay = query.since.toISOString().slice(0, 10);
      let at: ListCursor = query.cursor ? decodeCursor(query.cursor, isListCursor) : { d: lastIncluded.slice(0, 10) };
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
      while (at.d >= firstDay) {
        const page = await client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: BY_CREATED_DAY.indexName,
            KeyConditionExpression: 'createdDay = :day AND createdAt BETWEEN :since AND :until',
            ...(filters.length > 0 ? { FilterExpression: filters.join(' AND ') } : {}),
            ExpressionAttributeValues: { ':day': at.d, ':since': query.since.toISOString(), ':until': lastIncluded, ...values },
            ScanIndexForward: false,
            Limit: query.limit - collections.length,
            ExclusiveStartKey: at.k,
          }),
        );
        collections.push(...(page.Items ?? []).map(toCollection));
        const previousDay = new Date(Date.parse(at.d) - DAY_MS).toISOString().slice(0, 10);
        at = page.LastEvaluatedKey ? { d: at.d, k: page.LastEvaluatedKey } : { d: previousDay };
        if (collections.length >= query.limit) break;
      }
      return at.d >= firstDay ? { collections, cursor: encodeCursor(at) } : { collections };
    },
  };
}
